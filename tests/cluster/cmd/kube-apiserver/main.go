// Command kube-apiserver is Kubernetes' API server (k8s.io/kubernetes
// cmd/kube-apiserver/app), built from the Go module proxy at the version
// go.mod pins.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
