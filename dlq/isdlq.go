package dlq

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/tidemq/tidemq"
)

// NotADLQError is the refusal to redrive a queue that is not a dead-letter
// queue (without Force); Error says why and what was probably meant.
type NotADLQError struct {
	Queue string
	// OwnDLQ is the queue's own dead-letter queue, when it is a source.
	OwnDLQ string
	why    string
}

func (e *NotADLQError) Error() string { return e.why }

// checkIsDLQ refuses to redrive a queue that is not a dead-letter queue:
// redriving a live queue by mistake (scratch for scratch-dlq) receives the
// messages its consumer is waiting for and, with a low maxReceiveCount,
// dead-letters them at their next receive.
//
// A queue counts as a DLQ when some RedrivePolicy names it (sources), when
// it is named like one, when its RedriveAllowPolicy lists the queues that
// may use it (byQueue), or, on tidemq, when it holds dead-lettered
// messages; the last three keep a DLQ whose source was deleted
// redrivable.
func (c *Client) checkIsDLQ(ctx context.Context, q *queueRef, sources []string) error {
	if len(sources) > 0 || tidemq.NamedLikeDeadLetterQueue(q.Name) {
		return nil
	}
	attrs, err := c.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(q.URL),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameRedrivePolicy, types.QueueAttributeNameRedriveAllowPolicy}})
	if err != nil {
		return fmt.Errorf("queue %s: %w", q.Name, err)
	}
	var allow struct {
		Permission string `json:"redrivePermission"`
	}
	if json.Unmarshal([]byte(attrs.Attributes["RedriveAllowPolicy"]), &allow) == nil && allow.Permission == "byQueue" {
		return nil
	}
	if tide, err := c.IsTidemq(ctx); err == nil && tide {
		var out struct {
			Queues []queueStats `json:"Queues"`
		}
		if err := c.ext(ctx, "ListQueueStats", map[string]string{"QueueNamePrefix": q.Name}, &out); err == nil {
			for _, s := range out.Queues {
				if s.ARN == q.ARN && s.IsDeadLetterQueue {
					return nil
				}
			}
		}
	}
	why := fmt.Sprintf("%s is not a dead-letter queue: no RedrivePolicy names it", q.Name)
	if tide, _ := c.IsTidemq(ctx); tide {
		why += ", it holds no dead-lettered messages"
	}
	why += " and it is not named like one"
	var own struct {
		Target string `json:"deadLetterTargetArn"`
	}
	refusal := &NotADLQError{Queue: q.Name}
	if json.Unmarshal([]byte(attrs.Attributes["RedrivePolicy"]), &own) == nil && own.Target != "" {
		refusal.OwnDLQ = nameOfURL(own.Target)
		why += fmt.Sprintf("; it is a source queue, whose own dead-letter queue is %s (did you mean 'tidemq dlq redrive %s'?)", nameOfURL(own.Target), nameOfURL(own.Target))
	}
	why += "; redriving it would take the messages its consumers are waiting for. --force redrives it anyway"
	refusal.why = why
	return refusal
}
