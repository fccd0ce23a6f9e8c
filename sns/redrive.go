package sns

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/tidemq/tidemq"
)

// A subscription's RedrivePolicy names the SQS queue that receives what
// cannot be delivered to the subscription: {"deadLetterTargetArn": "<queue
// ARN>"}. The queue must be in tidemq's region and account, and FIFO for a
// FIFO topic, standard for a standard topic. It need not exist yet (AWS
// does not check either); a dead letter for a queue that does not exist is
// logged and counted as lost.

type redrivePolicy struct {
	DeadLetterTargetArn string `json:"deadLetterTargetArn"`
}

// redriveError words a RedrivePolicy problem as AWS does ("Invalid
// parameter: RedrivePolicy: <reason>").
func redriveError(reason string) *tidemq.Error {
	return &tidemq.Error{Code: tidemq.ErrSNSInvalidParameter, Message: "Invalid parameter: RedrivePolicy: " + reason}
}

// checkRedrivePolicy validates a RedrivePolicy for a subscription to a
// topic (fifo says which kind) of account owner, whose dead-letter queue
// must be of that account (and of the service's region), and returns the
// dead-letter queue's name.
func (s *Service) checkRedrivePolicy(v, owner string, fifo bool) (string, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(v)))
	dec.DisallowUnknownFields()
	var p redrivePolicy
	if err := dec.Decode(&p); err != nil {
		if strings.Contains(err.Error(), "unknown field") {
			field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return "", redriveError("invalid JSON. Attribute " + field + " is unknown.")
		}
		return "", redriveError("failed to parse JSON.")
	}
	if dec.More() {
		return "", redriveError("failed to parse JSON.")
	}
	a, ok := tidemq.ParseARN(p.DeadLetterTargetArn)
	if !ok || a.Service != "sqs" || strings.Contains(a.Resource, ":") {
		return "", redriveError("deadLetterTargetArn is an invalid arn")
	}
	if a.Account != owner || a.Region != s.opt.Region {
		return "", redriveError("the dead-letter queue must be in the same region and account as the subscription")
	}
	switch isFIFO := strings.HasSuffix(a.Resource, ".fifo"); {
	case fifo && !isFIFO:
		return "", redriveError("must use a FIFO queue as DLQ for a FIFO Subscription to a FIFO Topic.")
	case !fifo && isFIFO:
		return "", redriveError("must use a standard queue as DLQ for a subscription to a standard topic.")
	}
	return a.Resource, nil
}

// deadLetterTargetARN returns the queue ARN of a stored RedrivePolicy.
func deadLetterTargetARN(policy string) string {
	var p redrivePolicy
	_ = json.Unmarshal([]byte(policy), &p)
	return p.DeadLetterTargetArn
}
