package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
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
