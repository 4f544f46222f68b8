package main

import (
	admissionv1 "k8s.io/api/admissionregistration/v1"
	admissionv1beta1 "k8s.io/api/admissionregistration/v1beta1"

	"github.com/kiso-dev/kiso/functions/internal/awsmanaged"
	"github.com/kiso-dev/kiso/functions/internal/typed"
)

// init registers the provider-aws kinds and admission policies this function composes.
func init() {
	typed.MustRegister(awsmanaged.AddToScheme, admissionv1.AddToScheme, admissionv1beta1.AddToScheme)
}
