package main

import (
	admissionv1 "k8s.io/api/admissionregistration/v1"
	admissionv1beta1 "k8s.io/api/admissionregistration/v1beta1"

	eventsv1beta1 "github.com/upbound/provider-aws/v2/apis/cluster/cloudwatchevents/v1beta1"
	eventsv1beta2 "github.com/upbound/provider-aws/v2/apis/cluster/cloudwatchevents/v1beta2"
	eksv1beta1 "github.com/upbound/provider-aws/v2/apis/cluster/eks/v1beta1"
	iamv1beta1 "github.com/upbound/provider-aws/v2/apis/cluster/iam/v1beta1"
	sqsv1beta1 "github.com/upbound/provider-aws/v2/apis/cluster/sqs/v1beta1"

	"github.com/kiso-dev/kiso/functions/internal/typed"
)

// init registers the provider-aws kinds and admission policies this function
// composes. Rule is v1beta1; Target is v1beta2, the version provider-aws
// converts every other Target version to.
func init() {
	typed.MustRegister(
		iamv1beta1.AddToScheme,
		sqsv1beta1.AddToScheme,
		eventsv1beta1.AddToScheme,
		eventsv1beta2.AddToScheme,
		eksv1beta1.AddToScheme,
		admissionv1.AddToScheme,
		admissionv1beta1.AddToScheme,
	)
}
