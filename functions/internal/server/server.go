// Package server is the command line both kiso functions share: the flags
// Crossplane's function runtime passes, and serving a FunctionRunnerService.
package server

import (
	"strconv"
	"time"

	"github.com/alecthomas/kong"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/crossplane/function-sdk-go"
	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// MaxRecvBytes is the largest request the server accepts by default
// (--max-recv-message-size). Crossplane sends every object a function
// requires, whole and managed fields included, in every request: an
// organization in Warn mode reads every pod of its namespaces (about 11 KB
// each as Crossplane sends them) and a cluster judging a rollout wave every
// NodeClaim. Size tests hold it to 5,000 pods and to 2,000 NodeClaims; past it gRPC refuses the request, and the
// next call reads neither for an hour (readlimit).
const MaxRecvBytes = maxRecvMegabytes << 20

const maxRecvMegabytes = 128

// CLI holds the flags of a function binary.
type CLI struct {
	Debug bool `help:"Emit debug logs in addition to info logs." short:"d"`

	Network            string `default:"tcp"                  help:"Network on which to listen for gRPC connections."`
	Address            string `default:":9443"                help:"Address at which to listen for gRPC connections."`
	TLSCertsDir        string `env:"TLS_SERVER_CERTS_DIR"     help:"Directory containing server certs (tls.key, tls.crt) and the CA used to verify client certificates (ca.crt)."`
	Insecure           bool   `help:"Run without mTLS credentials; --tls-server-certs-dir is then ignored."`
	MaxRecvMessageSize int    `default:"${max_recv_mb}"       help:"Maximum size of received messages in MiB: a Warn-mode organization's request holds every pod of its namespaces, a rollout's every NodeClaim."`
	MetricsAddress     string `default:":8080"                help:"Address at which to serve Prometheus metrics (/metrics): the gRPC server's and kiso's series about each XR; empty serves none."`

	newFunction func(logging.Logger) fnv1.FunctionRunnerServiceServer
	metrics     Metrics
}

// Run serves the function until the process is stopped.
func (c *CLI) Run() error {
	log, err := function.NewLogger(c.Debug)
	if err != nil {
		return err
	}
	var fn fnv1.FunctionRunnerServiceServer = sizeGuard{recovering{FunctionRunnerServiceServer: c.newFunction(log), log: log}}
	if c.MetricsAddress != "" {
		col := newCollector(c.metrics.Families, time.Now)
		if err := prometheus.DefaultRegisterer.Register(col); err != nil {
			return errors.Wrap(err, "cannot register kiso's metrics")
		}
		fn = reporting{FunctionRunnerServiceServer: fn, metrics: c.metrics, collector: col, log: log}
	}
	// The SDK serves the default registry, the gRPC server's metrics and kiso's, at the metrics address.
	return function.Serve(loggedRunner{FunctionRunnerServiceServer: fn, log: log},
		function.Listen(c.Network, c.Address),
		function.WithMetricsServer(c.MetricsAddress),
		function.MTLSCertificates(c.TLSCertsDir),
		function.Insecure(c.Insecure),
		function.MaxRecvMessageSize(c.MaxRecvMessageSize*1024*1024))
}

// Main parses the command line and serves the function newFunction builds, exporting what metrics derives from
// each call.
func Main(description string, newFunction func(logging.Logger) fnv1.FunctionRunnerServiceServer, metrics Metrics) {
	cli := &CLI{newFunction: newFunction, metrics: metrics}
	ctx := kong.Parse(cli, kong.Description(description), kong.Vars{"max_recv_mb": strconv.Itoa(maxRecvMegabytes)})
	ctx.FatalIfErrorf(ctx.Run())
}
