// Command kube-controller-manager is Kubernetes' controller manager
// (k8s.io/kubernetes cmd/kube-controller-manager/app): the Job controller
// and the garbage collector are what the suites rely on.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
