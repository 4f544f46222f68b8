// Command cluster is kiso's composition function that turns an
// XKarpenterCluster into everything Karpenter needs on AWS for one EKS
// cluster: IAM roles and policies, the node instance profile and access
// entry, the interruption queue and its EventBridge rules.
package main

import (
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/kiso-dev/kiso/functions/internal/server"
)

func main() {
	server.Main("kiso's cluster function: Karpenter's AWS prerequisites for one EKS cluster.",
		func(log logging.Logger) fnv1.FunctionRunnerServiceServer { return &Function{log: log} }, metrics)
}
