// Package dlq is the toolkit behind 'tidemq dlq': list, peek, redrive,
// export, import and purge dead-letter queues on any SQS endpoint, tidemq
// or AWS itself, through aws-sdk-go-v2.
//
// Every operation takes an *sqs.Client (the endpoint, region and
// credentials are the caller's business) and writes what it has to say to an
// io.Writer, so the commands are plain functions that tests drive against
// an in-process server.
//
// On tidemq, the toolkit uses tidemq's extension actions (see
// api/sqs/extensions.go): a peek that changes nothing about a message, each
// message's history (who received it, when, and why it was dead-lettered),
// and exact queue statistics. It finds out whether it talks to tidemq by
// trying an extension once: AWS answers an unknown-operation error, and the
// toolkit falls back to what plain SQS offers, saying what that costs.
package dlq

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Mode says which kind of endpoint a Client talks to.
type Mode int

const (
	// ModeAuto detects the endpoint on first use.
	ModeAuto Mode = iota
	// ModeTidemq uses tidemq's extensions.
	ModeTidemq
	// ModeAWS uses only what plain SQS offers.
	ModeAWS
)

func (m Mode) String() string {
	switch m {
	case ModeTidemq:
		return "tidemq"
	case ModeAWS:
		return "aws"
	}
	return "auto"
}

// Client runs the toolkit's operations against one endpoint.
type Client struct {
	SQS *sqs.Client
	// Out receives the operation's output; Err its warnings and progress.
	Out, Err io.Writer
	// Mode forces an endpoint kind; ModeAuto detects it.
	Mode Mode
	// Progress draws progress bars on Err.
	Progress bool
	// PollWait is the long-poll wait, in seconds, of the receives that
	// follow an empty one while draining a queue (the first receive is
	// short). 0 keeps every receive short (tests, tidemq, where a short
	// receive sees every message).
	PollWait int32
	// EmptyPolls is how many consecutive empty receives mean a queue is
	// drained; 0 means 3.
	EmptyPolls int
	// TaskPoll is how often a move task's progress is polled; 0 means 1s.
	TaskPoll time.Duration
	// Now is the clock used to show ages; nil means time.Now.
	Now func() time.Time

	once sync.Once
	mode Mode
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Client) errw() io.Writer {
	if c.Err == nil {
		return io.Discard
	}
	return c.Err
}

func (c *Client) warnf(format string, args ...any) {
	fmt.Fprintf(c.errw(), "warning: "+format+"\n", args...)
}

// IsTidemq reports whether the endpoint is tidemq: whether it answers
// tidemq's extension actions. The answer is found once and remembered.
func (c *Client) IsTidemq(ctx context.Context) (bool, error) {
	var err error
	c.once.Do(func() {
		c.mode = c.Mode
		if c.mode != ModeAuto {
			return
		}
		var out struct{}
		e := c.ext(ctx, "ListQueueStats", map[string]string{"QueueNamePrefix": "\x00tidemq-probe"}, &out)
		switch {
		case e == nil:
			c.mode = ModeTidemq
		case isUnknownOperation(e):
			c.mode = ModeAWS
		default:
			err = e
		}
	})
	if err != nil {
		c.once = sync.Once{} // try again next time
		return false, err
	}
	return c.mode == ModeTidemq, nil
}

// --- queues ---

// queueRef is a queue the toolkit works on.
type queueRef struct {
	URL  string
	ARN  string
	Name string
	FIFO bool
}

// resolve turns a queue name, URL or ARN into a queueRef.
func (c *Client) resolve(ctx context.Context, q string) (*queueRef, error) {
	url := q
	switch {
	case strings.HasPrefix(q, "arn:"):
		parts := strings.Split(q, ":")
		if len(parts) != 6 {
			return nil, fmt.Errorf("%q is not a queue ARN", q)
		}
		out, err := c.SQS.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(parts[5]), QueueOwnerAWSAccountId: aws.String(parts[4])})
		if err != nil {
			return nil, queueError(q, err)
		}
		url = aws.ToString(out.QueueUrl)
	case !strings.Contains(q, "://"):
		out, err := c.SQS.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(q)})
		if err != nil {
			return nil, queueError(q, err)
		}
		url = aws.ToString(out.QueueUrl)
	}
	attrs, err := c.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn, types.QueueAttributeNameFifoQueue}})
	if err != nil {
		return nil, queueError(q, err)
	}
	ref := &queueRef{URL: url, ARN: attrs.Attributes["QueueArn"], Name: nameOfURL(url), FIFO: attrs.Attributes["FifoQueue"] == "true"}
	return ref, nil
}

// queueError words a failed queue lookup; a queue that does not exist says
// so plainly rather than through the SDK's error chain.
func queueError(q string, err error) error {
	var missing *types.QueueDoesNotExist
	if errors.As(err, &missing) {
		return fmt.Errorf("queue %s does not exist (create it first, e.g. aws sqs create-queue --queue-name %s): %w", q, nameOfURL(q), ErrNoSuchQueue)
	}
	return fmt.Errorf("queue %s: %w", q, err)
}

// ErrNoSuchQueue is returned when a named queue does not exist.
var ErrNoSuchQueue = errors.New("no such queue")

// nameOfURL is the last path segment of a queue URL (or ARN).
func nameOfURL(s string) string {
	s = strings.TrimRight(s, "/")
	if i := strings.LastIndexAny(s, "/:"); i >= 0 {
		return s[i+1:]
	}
	return s
}
