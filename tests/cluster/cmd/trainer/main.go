// Command trainer is Kubeflow Trainer's controller manager
// (github.com/kubeflow/trainer/v2, the version go.mod pins) run out of
// cluster: its runtimes, controllers and webhooks set up as its own
// cmd/trainer-controller-manager does (config.Load with the default
// configuration, runtimecore.New, controller.SetupControllers,
// webhooks.Setup), serving the webhooks on loopback with the certificate
// tests/cluster/up makes instead of managing its own. No leader election,
// no metrics, no status server.
package main

import (
	"flag"
	"fmt"
	"os"

	apiruntime "k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlpkg "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	schedulerpluginsv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	configapi "github.com/kubeflow/trainer/v2/pkg/apis/config/v1alpha1"
	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	"github.com/kubeflow/trainer/v2/pkg/config"
	"github.com/kubeflow/trainer/v2/pkg/controller"
	runtimecore "github.com/kubeflow/trainer/v2/pkg/runtime/core"
	"github.com/kubeflow/trainer/v2/pkg/webhooks"
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
	log := ctrl.Log.WithName("trainer")

	scheme := apiruntime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(configapi.AddToScheme(scheme))
	utilruntime.Must(trainer.AddToScheme(scheme))
	utilruntime.Must(jobsetv1alpha2.AddToScheme(scheme))
	utilruntime.Must(schedulerpluginsv1alpha1.AddToScheme(scheme))
	utilruntime.Must(volcanov1beta1.AddToScheme(scheme))

	options, cfg, err := config.Load(scheme, "")
	must(err, "the default configuration")
	options.Metrics = metricsserver.Options{BindAddress: "0"}
	options.HealthProbeBindAddress = fmt.Sprintf("127.0.0.1:%d", probe)
	options.LeaderElection = false
	options.WebhookServer = webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: certDir})
	restCfg := ctrl.GetConfigOrDie()
	config.ApplyClientConnection(restCfg, &cfg)
	mgr, err := ctrl.NewManager(restCfg, options)
	must(err, "the manager")

	ctx := ctrl.SetupSignalHandler()
	runtimes, err := runtimecore.New(ctx, mgr.GetClient(), mgr.GetFieldIndexer(), &cfg)
	must(err, "the runtimes")
	if name, err := controller.SetupControllers(mgr, runtimes, ctrlpkg.Options{}); err != nil {
		must(err, "the controller "+name)
	}
	if name, err := webhooks.Setup(mgr, runtimes); err != nil {
		must(err, "the webhook "+name)
	}
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
