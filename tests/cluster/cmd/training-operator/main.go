// Command training-operator is the Kubeflow Training Operator
// (github.com/kubeflow/training-operator, the version go.mod pins) run out
// of cluster for PyTorchJobs: the PyTorchJob reconciler and webhook set up
// as its cmd/training-operator.v1 does (SupportedSchemeReconciler,
// SupportedSchemeWebhook, no gang scheduler, its flags' defaults for the
// init container), serving the webhook on loopback with the certificate
// tests/cluster/up makes instead of managing its own. No leader election,
// no metrics.
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

	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	"github.com/kubeflow/training-operator/pkg/config"
	controllerv1 "github.com/kubeflow/training-operator/pkg/controller.v1"
	"github.com/kubeflow/training-operator/pkg/controller.v1/common"
	"github.com/kubeflow/training-operator/pkg/webhooks"
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
	log := ctrl.Log.WithName("training-operator")

	// What cmd/training-operator.v1's flags default to.
	config.Config.PyTorchInitContainerImage = config.PyTorchInitContainerImageDefault
	config.Config.PyTorchInitContainerTemplateFile = config.PyTorchInitContainerTemplateFileDefault
	config.Config.PyTorchInitContainerMaxTries = config.PyTorchInitContainerMaxTriesDefault
	config.Config.MPIKubectlDeliveryImage = config.MPIKubectlDeliveryImageDefault

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(kubeflowv1.AddToScheme(scheme))
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: fmt.Sprintf("127.0.0.1:%d", probe),
		WebhookServer:          webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: certDir}),
	})
	must(err, "the manager")
	kind := kubeflowv1.PyTorchJobKind
	must(controllerv1.SupportedSchemeReconciler[kind](mgr, common.GenNonGangSchedulerSetupFunc(), 1), "the PyTorchJob controller")
	must(webhooks.SupportedSchemeWebhook[kind](mgr), "the PyTorchJob webhook")
	must(mgr.AddHealthzCheck("healthz", healthz.Ping), "the health check")
	must(mgr.AddReadyzCheck("readyz", mgr.GetWebhookServer().StartedChecker()), "the ready check")
	log.Info("starting")
	must(mgr.Start(ctrl.SetupSignalHandler()), "the manager's run")
}

func must(err error, what string) {
	if err != nil {
		ctrl.Log.Error(err, "cannot set up "+what)
		os.Exit(1)
	}
}
