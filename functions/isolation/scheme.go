package main

import (
	corev1 "k8s.io/api/core/v1"

	eksv1beta1 "github.com/upbound/provider-aws/v2/apis/cluster/eks/v1beta1"
	iamv1beta1 "github.com/upbound/provider-aws/v2/apis/cluster/iam/v1beta1"

	"github.com/kiso-dev/kiso/functions/internal/typed"
)

// init registers the kinds this function composes from Go types: a
// Dedicated node identity's IAM and EKS managed resources.
func init() {
	typed.MustRegister(corev1.AddToScheme, iamv1beta1.AddToScheme, eksv1beta1.AddToScheme)
}
