// Command isolation is kiso's composition function that turns one
// organization's XKarpenterIsolation into dedicated Karpenter capacity.
package main

import (
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/functions/internal/server"
)

func main() {
	server.Main("kiso's isolation function: dedicated Karpenter pools per organization or per stack.",
		func(log logging.Logger) fnv1.FunctionRunnerServiceServer { return &Function{log: log} }, metrics)
}
