// Command jobset is JobSet's controller manager (sigs.k8s.io/jobset, the
// version go.mod pins) run out of cluster: its JobSet and Pod controllers
// and its webhooks, set up as its own main.go does
// (controllers.SetupJobSetIndexes, SetupPodIndexes, NewJobSetReconciler,
// NewPodReconciler, webhooks.Setup), serving the webhooks on loopback with
// the certificate tests/cluster/up makes.
package main

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"

	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	"sigs.k8s.io/jobset/pkg/controllers"
	"sigs.k8s.io/jobset/pkg/webhooks"

	"trainc.dev/tests/cluster/internal/manager"
)

func main() {
	flags := manager.Parse()
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(jobset.AddToScheme(scheme))
	options := ctrl.Options{Scheme: scheme}
	flags.Serve(&options)
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), options)
	manager.Must(err, "the manager")
	ctx := ctrl.SetupSignalHandler()
	manager.Must(controllers.SetupJobSetIndexes(ctx, mgr.GetFieldIndexer()), "the JobSet indexes")
	manager.Must(controllers.SetupPodIndexes(ctx, mgr.GetFieldIndexer()), "the Pod indexes")
	manager.Must(controllers.NewJobSetReconciler(mgr.GetClient(), mgr.GetScheme(), mgr.GetEventRecorder("jobset")).SetupWithManager(mgr), "the JobSet controller")
	manager.Must(controllers.NewPodReconciler(mgr.GetClient(), mgr.GetScheme(), mgr.GetEventRecorder("pod")).SetupWithManager(mgr), "the Pod controller")
	manager.Must(webhooks.Setup(mgr), "the webhooks")
	manager.Run(ctx, mgr, "jobset")
}
