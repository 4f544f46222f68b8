package main

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/kiso-dev/kiso/functions/internal/aws"
	"github.com/kiso-dev/kiso/functions/internal/awsmanaged"
	"github.com/kiso-dev/kiso/functions/internal/ownership"
)

// The interruption queue as AWS's template makes it.
const (
	queueRetentionSeconds = 300
	queuePolicyID         = "EC2InterruptionPolicy"
	// targetID is the Id of every rule's target in AWS's template.
	targetID = "KarpenterInterruptionQueueTarget"
)

// queueSenders may send to the queue: EventBridge, and SQS itself. AWS's
// template names them so in every partition.
var queueSenders = aws.Values{"events.amazonaws.com", "sqs.amazonaws.com"}

// A rule is one of the EventBridge rules of AWS's template: the events
// Karpenter's interruption controller has a parser for.
type rule struct {
	// Key names the rule's composed resources and is its AWS name's suffix.
	Key        string
	Source     string
	DetailType string
}

// rules are AWS's five, in the template's order.
var rules = []rule{
	{"scheduled-change", "aws.health", "AWS Health Event"},
	{"spot-interruption", "aws.ec2", "EC2 Spot Instance Interruption Warning"},
	{"rebalance", "aws.ec2", "EC2 Instance Rebalance Recommendation"},
	{"instance-state-change", "aws.ec2", "EC2 Instance State-change Notification"},
	{"capacity-reservation-interruption", "aws.ec2", "EC2 Capacity Reservation Instance Interruption Warning"},
}

// eventPattern is a rule's event pattern in the template's key order.
func (r rule) eventPattern() string {
	b, err := json.Marshal(struct {
		Source     []string `json:"source"`
		DetailType []string `json:"detail-type"`
	}{[]string{r.Source}, []string{r.DetailType}})
	if err != nil {
		panic(err) // two lists of strings always marshal
	}
	return string(b)
}

// queuePolicy lets EventBridge send to the queue and denies every action
// without TLS, as AWS's template does.
func queuePolicy(queueARN string) aws.PolicyDocument {
	return aws.PolicyDocument{Version: aws.PolicyVersion, ID: queuePolicyID, Statement: []aws.Statement{
		{Effect: aws.Allow, Principal: &aws.Principal{Service: queueSenders}, Action: aws.Values{"sqs:SendMessage"}, Resource: aws.Values{queueARN}},
		{Sid: "DenyHTTP", Effect: aws.Deny, Principal: &aws.Principal{Everyone: true}, Action: aws.Values{"sqs:*"}, Resource: aws.Values{queueARN},
			Condition: aws.Condition{"Bool": {"aws:SecureTransport": {"false"}}}},
	}}
}

// renderInterruption returns the queue, its policy, and each rule with its
// target. Targets point at the queue's ARN, which is known from partition,
// region, account and name, so they need not wait for the queue's status.
func renderInterruption(p plan) map[resource.Name]runtime.Object {
	if !p.Interruption {
		return nil
	}
	out := map[resource.Name]runtime.Object{}
	queue := p.objectName("interruption")
	out[crQueue] = &awsmanaged.Queue{
		ObjectMeta: ownership.ObjectMeta(queue, "", nil),
		Spec: awsmanaged.QueueSpec{
			ResourceSpec: resourceSpec(p),
			ForProvider: awsmanaged.QueueParameters{
				Region:                  ptr.To(p.Region),
				Name:                    ptr.To(p.QueueName),
				MessageRetentionSeconds: ptr.To(float64(queueRetentionSeconds)),
				SqsManagedSseEnabled:    ptr.To(true),
				Tags:                    p.Tags,
			},
		},
	}
	out[crQueuePolicy] = &awsmanaged.QueuePolicy{
		ObjectMeta: ownership.ObjectMeta(queue, "", nil),
		Spec: awsmanaged.QueuePolicySpec{
			ResourceSpec: resourceSpec(p),
			ForProvider: awsmanaged.QueuePolicyParameters{
				Region:      ptr.To(p.Region),
				QueueURLRef: &awsmanaged.Reference{Name: queue},
				Policy:      ptr.To(queuePolicy(p.QueueARN).JSON()),
			},
		},
	}
	for _, r := range rules {
		name := p.objectName(r.Key)
		out[crRule+resource.Name(r.Key)] = &awsmanaged.Rule{
			ObjectMeta: ownership.ObjectMeta(name, p.names.rule(r), nil),
			Spec: awsmanaged.RuleSpec{
				ResourceSpec: resourceSpec(p),
				ForProvider: awsmanaged.RuleParameters{
					Region:       ptr.To(p.Region),
					EventPattern: ptr.To(r.eventPattern()),
					Tags:         p.Tags,
				},
			},
		}
		out[crTarget+resource.Name(r.Key)] = &awsmanaged.Target{
			ObjectMeta: ownership.ObjectMeta(name, "", nil),
			Spec: awsmanaged.TargetSpec{
				ResourceSpec: resourceSpec(p),
				ForProvider: awsmanaged.TargetParameters{
					Region:   ptr.To(p.Region),
					RuleRef:  &awsmanaged.Reference{Name: name},
					TargetID: ptr.To(targetID),
					Arn:      ptr.To(p.QueueARN),
				},
			},
		}
	}
	return out
}
