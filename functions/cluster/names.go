package main

import (
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/functions/internal/names"
)

// AWS's name limits.
const (
	maxRoleName   = 64
	maxPolicyName = 128
	maxRuleName   = 64
	maxQueueName  = 80
	// maxObjectName keeps composed objects' Kubernetes names usable as label
	// values too.
	maxObjectName = names.MaxLabelValue
)

// joinAWS joins the parts of an AWS name with "-", shortened with a hash
// when longer than maxLen.
func joinAWS(maxLen int, parts ...string) string { return names.Join(maxLen, parts...) }

// controllerRoleName is eksctl's getting-started name, <cluster>-karpenter.
func controllerRoleName(cluster string) string { return joinAWS(maxRoleName, cluster, "karpenter") }

// nodeRoleName is AWS's template name, KarpenterNodeRole-<cluster>; the
// instance profile has the same name.
func nodeRoleName(cluster string) string { return joinAWS(maxRoleName, "KarpenterNodeRole", cluster) }

// ruleName is <cluster>-<rule>: AWS's template leaves rule names to
// CloudFormation; a <cluster>- prefix lets a permissions boundary scope
// them, as in seed 001.
func ruleName(cluster string, r rule) string { return joinAWS(maxRuleName, cluster, r.Key) }

// objectName is a composed object's Kubernetes name: the cluster name made
// DNS-1123 (lowercase, hashed if that changed it), then "karpenter" and the
// parts. The AWS name is set separately, so it keeps the cluster's case.
func (p plan) objectName(parts ...string) string {
	return names.Join(maxObjectName, append([]string{p.objectBase, "karpenter"}, parts...)...)
}

// Composed resource names: the keys of desired state, stable and readable.
const (
	crControllerRole   = resource.Name("controller-role")
	crQueue            = resource.Name("queue")
	crQueuePolicy      = resource.Name("queue-policy")
	crPodIdentity      = resource.Name("pod-identity-association")
	crPrometheusRule   = resource.Name("prometheus-rule")
	crControllerPolicy = "controller-policy-"
	crControllerAttach = "controller-policy-attachment-"
	crRule             = "rule-"
	crTarget           = "target-"
)
