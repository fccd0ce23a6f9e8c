package tidemq

import (
	"encoding/json"
	"strconv"
)

// RedrivePolicy is a queue's dead-letter configuration: after
// MaxReceiveCount receives, the next receive attempt moves a message to
// DeadLetterTargetARN.
type RedrivePolicy struct {
	DeadLetterTargetARN string
	MaxReceiveCount     int
}

// String renders the policy as SQS returns it.
func (p RedrivePolicy) String() string {
	b, _ := json.Marshal(struct {
		DeadLetterTargetArn string `json:"deadLetterTargetArn"`
		MaxReceiveCount     int    `json:"maxReceiveCount"`
	}{p.DeadLetterTargetARN, p.MaxReceiveCount})
	return string(b)
}

// ParseRedrivePolicy parses the RedrivePolicy attribute. maxReceiveCount may
// be a JSON number or a string holding one, as the AWS console writes it.
func ParseRedrivePolicy(s string) (RedrivePolicy, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		return RedrivePolicy{}, InvalidParameter("RedrivePolicy", s, "Redrive policy is not a valid JSON map.")
	}
	var p RedrivePolicy
	target, ok := raw["deadLetterTargetArn"]
	if !ok {
		return p, InvalidParameter("RedrivePolicy", s, "Redrive policy does not contain mandatory attribute: deadLetterTargetArn.")
	}
	if json.Unmarshal(target, &p.DeadLetterTargetARN) != nil {
		return p, InvalidParameter("RedrivePolicy", s, "Invalid value for deadLetterTargetArn.")
	}
	if a, ok := ParseARN(p.DeadLetterTargetARN); !ok || a.Service != "sqs" {
		return p, InvalidParameter("RedrivePolicy", s, "Invalid value for deadLetterTargetArn.")
	}
	count, ok := raw["maxReceiveCount"]
	if !ok {
		return p, InvalidParameter("RedrivePolicy", s, "Redrive policy does not contain mandatory attribute: maxReceiveCount.")
	}
	n, ok := jsonInt(count)
	if !ok || n < MinMaxReceiveCount || n > MaxMaxReceiveCount {
		return p, InvalidParameter("RedrivePolicy", s, "Invalid value for maxReceiveCount: "+string(count)+", valid values are from 1 to 1000 both inclusive.")
	}
	p.MaxReceiveCount = n
	for k := range raw {
		if k != "deadLetterTargetArn" && k != "maxReceiveCount" {
			return p, InvalidParameter("RedrivePolicy", s, "Only following attributes are supported: [deadLetterTargetArn, maxReceiveCount].")
		}
	}
	return p, nil
}

func jsonInt(raw json.RawMessage) (int, bool) {
	var n int
	if json.Unmarshal(raw, &n) == nil {
		return n, true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if v, err := strconv.Atoi(s); err == nil {
			return v, true
		}
	}
	return 0, false
}

// Redrive permissions.
const (
	RedriveAllowAll = "allowAll"
	RedriveDenyAll  = "denyAll"
	RedriveByQueue  = "byQueue"
)

// RedriveAllowPolicy says which source queues may use a queue as their DLQ.
type RedriveAllowPolicy struct {
	RedrivePermission string   `json:"redrivePermission"`
	SourceQueueARNs   []string `json:"sourceQueueArns,omitempty"`
}

// String renders the policy as SQS returns it.
func (p RedriveAllowPolicy) String() string {
	b, _ := json.Marshal(p)
	return string(b)
}

// Allows reports whether a queue with the given ARN may use the queue that
// carries this policy as its dead-letter queue.
func (p RedriveAllowPolicy) Allows(sourceARN string) bool {
	switch p.RedrivePermission {
	case RedriveDenyAll:
		return false
	case RedriveByQueue:
		for _, a := range p.SourceQueueARNs {
			if a == sourceARN {
				return true
			}
		}
		return false
	}
	return true
}

// ParseRedriveAllowPolicy parses the RedriveAllowPolicy attribute.
func ParseRedriveAllowPolicy(s string) (RedriveAllowPolicy, error) {
	var p RedriveAllowPolicy
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		return p, InvalidParameter("RedriveAllowPolicy", s, "Redrive allow policy is not a valid JSON map.")
	}
	switch p.RedrivePermission {
	case RedriveAllowAll, RedriveDenyAll:
		if len(p.SourceQueueARNs) > 0 {
			return p, InvalidParameter("RedriveAllowPolicy", s, "Only when redrivePermission is byQueue can sourceQueueArns be specified.")
		}
	case RedriveByQueue:
		if len(p.SourceQueueARNs) == 0 || len(p.SourceQueueARNs) > MaxRedriveAllowSourceArns {
			return p, InvalidParameter("RedriveAllowPolicy", s, "When redrivePermission is byQueue, sourceQueueArns must hold 1 to 10 queue ARNs.")
		}
	default:
		return p, InvalidParameter("RedriveAllowPolicy", s, "redrivePermission must be one of allowAll, denyAll or byQueue.")
	}
	return p, nil
}

// RedriveTarget is what CheckRedriveTarget needs to know of the queue a
// RedrivePolicy's deadLetterTargetArn names.
type RedriveTarget struct {
	Name  string // as the Broker names it ("<region>/<name>" outside the home region)
	ARN   string
	FIFO  bool
	Allow RedriveAllowPolicy
}

// CheckRedriveTarget applies the rules that a RedrivePolicy's dead-letter
// queue must meet, once a Broker has looked up the queue its ARN names
// (target nil when there is none): it exists in the source's region, is of
// the source's type, and its RedriveAllowPolicy lets the source use it.
// policy is the attribute's text, for the error; home is the Broker's home
// region; source and sourceARN name the source queue, fifo is its type.
func CheckRedriveTarget(policy, home, source, sourceARN string, fifo bool, target *RedriveTarget) error {
	if target != nil {
		region, _ := SplitQueueName(CanonicalQueueName(source, home), home)
		if targetRegion, _ := SplitQueueName(target.Name, home); targetRegion != region {
			target = nil // a dead-letter queue in another region is none (AWS: same region)
		}
	}
	if target == nil {
		return InvalidParameter("RedrivePolicy", policy, "Dead letter target does not exist.")
	}
	if target.FIFO != fifo {
		return InvalidParameter("RedrivePolicy", policy, "Dead-letter target queue must be of the same type as the source queue: a FIFO queue needs a FIFO dead-letter queue, a standard queue a standard one.")
	}
	if !target.Allow.Allows(sourceARN) {
		return InvalidParameter("RedrivePolicy", policy, "Queue "+target.ARN+" does not allow "+sourceARN+" to use it as a dead-letter queue (RedriveAllowPolicy).")
	}
	return nil
}
