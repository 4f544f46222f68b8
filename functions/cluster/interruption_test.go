package main

import (
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kiso-dev/kiso/functions/internal/fntest"
)

func TestRulesAreAWSsFive(t *testing.T) {
	want := map[string]string{
		"scheduled-change":                  `{"source":["aws.health"],"detail-type":["AWS Health Event"]}`,
		"spot-interruption":                 `{"source":["aws.ec2"],"detail-type":["EC2 Spot Instance Interruption Warning"]}`,
		"rebalance":                         `{"source":["aws.ec2"],"detail-type":["EC2 Instance Rebalance Recommendation"]}`,
		"instance-state-change":             `{"source":["aws.ec2"],"detail-type":["EC2 Instance State-change Notification"]}`,
		"capacity-reservation-interruption": `{"source":["aws.ec2"],"detail-type":["EC2 Capacity Reservation Instance Interruption Warning"]}`,
	}
	got := map[string]string{}
	for _, r := range rules {
		got[r.Key] = r.eventPattern()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("event patterns: -want, +got:\n%s", diff)
	}
}

func TestQueuePolicyIsAWSs(t *testing.T) {
	// AWS's KarpenterInterruptionQueuePolicy: EventBridge and SQS may send,
	// nothing may reach the queue without TLS.
	want := `{"Version":"2012-10-17","Id":"EC2InterruptionPolicy","Statement":[` +
		`{"Effect":"Allow","Principal":{"Service":["events.amazonaws.com","sqs.amazonaws.com"]},"Action":"sqs:SendMessage","Resource":"arn:aws-us-gov:sqs:us-gov-west-1:111122223333:prod"},` +
		`{"Sid":"DenyHTTP","Effect":"Deny","Principal":"*","Action":"sqs:*","Resource":"arn:aws-us-gov:sqs:us-gov-west-1:111122223333:prod","Condition":{"Bool":{"aws:SecureTransport":"false"}}}]}`
	if diff := cmp.Diff(want, queuePolicy("arn:aws-us-gov:sqs:us-gov-west-1:111122223333:prod").JSON()); diff != "" {
		t.Errorf("queue policy: -want, +got:\n%s", diff)
	}
}

// TestTurningInterruptionOffRetiresTheUsagesFirst turns interruption off on a cluster Crossplane composed. The
// queue, its policy, rules and targets and the controller's interruption policy go, but each only once the
// Usage that keeps it for the controller role is gone: while Crossplane labels an object in use its webhook
// refuses to delete it, and on the refusal Crossplane gives up the XR's whole reconcile.
func TestTurningInterruptionOffRetiresTheUsagesFirst(t *testing.T) {
	rendered := map[string]string{}
	for name, o := range fntest.Desired(t, run(t, newRequest(t, xr(podIdentitySpec), nil))) {
		o["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}, map[string]any{"type": "Synced", "status": "True"}}}
		rendered[name] = fntest.ToJSON(t, o)
	}
	observed := maps.Clone(rendered)
	fntest.LabelInUse(t, observed)
	off := strings.Replace(podIdentitySpec, `"tags":`, `"interruption":{"enabled":false},"tags":`, 1)

	rsp := run(t, newRequest(t, xr(off), observed))
	fntest.AssertNoFatal(t, rsp)
	got := fntest.Desired(t, rsp)
	retired := append([]string{"controller-policy-interruption"}, interruptionNames...)
	for _, name := range retired {
		if diff := cmp.Diff(fntest.JSONMap(t, rendered[name]), fntest.WithStatus(t, got[name], rendered[name])); diff != "" {
			t.Errorf("retired %s, still in use, must be kept as rendered: -rendered, +kept:\n%s", name, diff)
		}
	}
	for _, name := range usageNames(retired) {
		if _, ok := got[name]; ok {
			t.Errorf("Usage %s of a retired object is still composed", name)
		}
	}

	// Crossplane deleted the Usages and no longer labels their objects in use.
	for _, name := range usageNames(retired) {
		delete(rendered, name)
	}
	got = fntest.Desired(t, run(t, newRequest(t, xr(off), rendered)))
	for _, name := range retired {
		if _, ok := got[name]; ok {
			t.Errorf("retired %s is still composed once no Usage names it", name)
		}
	}
}
