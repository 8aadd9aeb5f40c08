// Command training-operator is the Kubeflow Training Operator
// (github.com/kubeflow/training-operator, the version go.mod pins) run out
// of cluster for PyTorchJobs: the PyTorchJob reconciler and webhook set up
// as its cmd/training-operator.v1 does (SupportedSchemeReconciler,
// SupportedSchemeWebhook, no gang scheduler, its flags' defaults for the
// init container), serving the webhook on loopback with the certificate
// tests/cluster/up makes instead of managing its own.
package main

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	schedulerpluginsv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	"volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	"github.com/kubeflow/training-operator/pkg/config"
	controllerv1 "github.com/kubeflow/training-operator/pkg/controller.v1"
	"github.com/kubeflow/training-operator/pkg/controller.v1/common"
	"github.com/kubeflow/training-operator/pkg/webhooks"

	"trainc.dev/tests/cluster/internal/manager"
)

func main() {
	flags := manager.Parse()
	// What cmd/training-operator.v1's flags default to.
	config.Config.PyTorchInitContainerImage = config.PyTorchInitContainerImageDefault
	config.Config.PyTorchInitContainerTemplateFile = config.PyTorchInitContainerTemplateFileDefault
	config.Config.PyTorchInitContainerMaxTries = config.PyTorchInitContainerMaxTriesDefault
	config.Config.MPIKubectlDeliveryImage = config.MPIKubectlDeliveryImageDefault

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(kubeflowv1.AddToScheme(scheme))
	// The gang schedulers' PodGroups, as cmd/training-operator.v1 registers
	// them: the PyTorchJob controller watches Volcano's where its CRD is
	// installed (up installs it for Trainer's volcano plugin).
	utilruntime.Must(v1beta1.AddToScheme(scheme))
	utilruntime.Must(schedulerpluginsv1alpha1.AddToScheme(scheme))
	options := ctrl.Options{Scheme: scheme}
	flags.Serve(&options)
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), options)
	manager.Must(err, "the manager")
	kind := kubeflowv1.PyTorchJobKind
	manager.Must(controllerv1.SupportedSchemeReconciler[kind](mgr, common.GenNonGangSchedulerSetupFunc(), 1), "the PyTorchJob controller")
	manager.Must(webhooks.SupportedSchemeWebhook[kind](mgr), "the PyTorchJob webhook")
	manager.Run(ctrl.SetupSignalHandler(), mgr, "training-operator")
}
