// Command jobset is JobSet's controller manager (sigs.k8s.io/jobset, the
// version go.mod pins) run out of cluster: its JobSet and Pod controllers
// and its webhooks, set up as its own main.go does
// (controllers.SetupJobSetIndexes, SetupPodIndexes, NewJobSetReconciler,
// NewPodReconciler, webhooks.Setup), serving the webhooks on loopback with
// the certificate tests/cluster/up makes. No leader election, no metrics.
package main

import (
	"flag"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	"sigs.k8s.io/jobset/pkg/controllers"
	"sigs.k8s.io/jobset/pkg/webhooks"
)

func main() {
	var port, probe int
	var certDir string
	flag.IntVar(&port, "webhook-port", 9443, "the port the webhooks serve on, on 127.0.0.1")
	flag.IntVar(&probe, "health-port", 8081, "the port of /healthz and /readyz, on 127.0.0.1")
	flag.StringVar(&certDir, "cert-dir", "", "the directory of tls.crt and tls.key")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	log := ctrl.Log.WithName("jobset")

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(jobset.AddToScheme(scheme))
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "127.0.0.1:" + itoa(probe),
		WebhookServer:          webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: certDir}),
	})
	must(err, "the manager")
	ctx := ctrl.SetupSignalHandler()
	must(controllers.SetupJobSetIndexes(ctx, mgr.GetFieldIndexer()), "the JobSet indexes")
	must(controllers.SetupPodIndexes(ctx, mgr.GetFieldIndexer()), "the Pod indexes")
	must(controllers.NewJobSetReconciler(mgr.GetClient(), mgr.GetScheme(), mgr.GetEventRecorder("jobset")).SetupWithManager(mgr), "the JobSet controller")
	must(controllers.NewPodReconciler(mgr.GetClient(), mgr.GetScheme(), mgr.GetEventRecorder("pod")).SetupWithManager(mgr), "the Pod controller")
	must(webhooks.Setup(mgr), "the webhooks")
	must(mgr.AddHealthzCheck("healthz", healthz.Ping), "the health check")
	must(mgr.AddReadyzCheck("readyz", mgr.GetWebhookServer().StartedChecker()), "the ready check")
	log.Info("starting")
	must(mgr.Start(ctx), "the manager's run")
}

func must(err error, what string) {
	if err != nil {
		ctrl.Log.Error(err, "cannot set up "+what)
		os.Exit(1)
	}
}

func itoa(n int) string {
	return fmt.Sprint(n)
}
