// Package manager is what the operators' mains share: the flags
// tests/cluster/up passes each (its webhook port, its probe port, the
// directory of its serving certificate), a controller-runtime manager that
// serves its webhooks on loopback without metrics or leader election, and
// its run with the readiness up waits for.
package manager

import (
	"context"
	"flag"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// Flags are what up tells an operator's manager.
type Flags struct {
	WebhookPort int
	HealthPort  int
	CertDir     string
}

// Parse reads the flags and sets the logger.
func Parse() Flags {
	var f Flags
	flag.IntVar(&f.WebhookPort, "webhook-port", 9443, "the port the webhooks serve on, on 127.0.0.1")
	flag.IntVar(&f.HealthPort, "health-port", 8081, "the port of /healthz and /readyz, on 127.0.0.1")
	flag.StringVar(&f.CertDir, "cert-dir", "", "the directory of tls.crt and tls.key")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	return f
}

// Serve sets options to serve the webhooks on 127.0.0.1 with the
// certificate up made, its probes beside them, and no metrics or leader
// election.
func (f Flags) Serve(options *ctrl.Options) {
	options.Metrics = metricsserver.Options{BindAddress: "0"}
	options.HealthProbeBindAddress = fmt.Sprintf("127.0.0.1:%d", f.HealthPort)
	options.LeaderElection = false
	options.WebhookServer = webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: f.WebhookPort, CertDir: f.CertDir})
}

// Run starts mgr, ready once its webhook server serves.
func Run(ctx context.Context, mgr ctrl.Manager, name string) {
	Must(mgr.AddHealthzCheck("healthz", healthz.Ping), "the health check")
	Must(mgr.AddReadyzCheck("readyz", mgr.GetWebhookServer().StartedChecker()), "the ready check")
	ctrl.Log.WithName(name).Info("starting")
	Must(mgr.Start(ctx), "the manager's run")
}

// Must exits when err, saying what could not be set up.
func Must(err error, what string) {
	if err != nil {
		ctrl.Log.Error(err, "cannot set up "+what)
		os.Exit(1)
	}
}
