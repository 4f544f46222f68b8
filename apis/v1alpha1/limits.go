package v1alpha1

// Limits the schema's CEL rules state and the functions check. A kubebuilder marker cannot name a Go
// constant, so a rule or its message writes {{Name}} and make generate fills in the value.
const (
	// MaxTagValueLength is the longest tag value, in characters, AWS accepts on any resource kiso tags.
	MaxTagValueLength = 256

	// MaxStackedStacks is the most stacks an organization may have in stack isolation, where each stack
	// renders a pool of its own: at about 7 KB per stack, 200 keep an organization's whole desired state
	// well inside the 4 MiB gRPC message Crossplane receives from the function.
	MaxStackedStacks = 200

	// MaxQueueNameLength is the longest SQS queue name. AWS's getting-started template names the
	// interruption queue after the cluster, so a cluster whose queue kiso takes over has a name no longer.
	MaxQueueNameLength = 80
)
