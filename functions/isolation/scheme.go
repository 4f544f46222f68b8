package main

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kiso-dev/kiso/functions/internal/awsmanaged"
	"github.com/kiso-dev/kiso/functions/internal/typed"
)

// init registers the kinds this function composes from Go types: a
// Dedicated node identity's IAM and EKS managed resources.
func init() {
	typed.MustRegister(corev1.AddToScheme, awsmanaged.AddToScheme)
}
