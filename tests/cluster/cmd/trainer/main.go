// Command trainer is Kubeflow Trainer's controller manager
// (github.com/kubeflow/trainer/v2, the version go.mod pins) run out of
// cluster: its runtimes, controllers and webhooks set up as its own
// cmd/trainer-controller-manager does (config.Load with the default
// configuration, runtimecore.New, controller.SetupControllers,
// webhooks.Setup), serving the webhooks on loopback with the certificate
// tests/cluster/up makes instead of managing its own. No status server.
package main

import (
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlpkg "sigs.k8s.io/controller-runtime/pkg/controller"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	schedulerpluginsv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	configapi "github.com/kubeflow/trainer/v2/pkg/apis/config/v1alpha1"
	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	"github.com/kubeflow/trainer/v2/pkg/config"
	"github.com/kubeflow/trainer/v2/pkg/controller"
	runtimecore "github.com/kubeflow/trainer/v2/pkg/runtime/core"
	"github.com/kubeflow/trainer/v2/pkg/webhooks"

	"trainc.dev/tests/cluster/internal/manager"
)

func main() {
	flags := manager.Parse()
	scheme := apiruntime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(configapi.AddToScheme(scheme))
	utilruntime.Must(trainer.AddToScheme(scheme))
	utilruntime.Must(jobsetv1alpha2.AddToScheme(scheme))
	utilruntime.Must(schedulerpluginsv1alpha1.AddToScheme(scheme))
	utilruntime.Must(volcanov1beta1.AddToScheme(scheme))

	options, cfg, err := config.Load(scheme, "")
	manager.Must(err, "the default configuration")
	flags.Serve(&options)
	restCfg := ctrl.GetConfigOrDie()
	config.ApplyClientConnection(restCfg, &cfg)
	mgr, err := ctrl.NewManager(restCfg, options)
	manager.Must(err, "the manager")

	ctx := ctrl.SetupSignalHandler()
	runtimes, err := runtimecore.New(ctx, mgr.GetClient(), mgr.GetFieldIndexer(), &cfg)
	manager.Must(err, "the runtimes")
	if name, err := controller.SetupControllers(mgr, runtimes, ctrlpkg.Options{}); err != nil {
		manager.Must(err, "the controller "+name)
	}
	if name, err := webhooks.Setup(mgr, runtimes); err != nil {
		manager.Must(err, "the webhook "+name)
	}
	manager.Run(ctx, mgr, "trainer")
}
