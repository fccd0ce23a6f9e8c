package dlq

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// PurgeOptions are the options of Purge.
type PurgeOptions struct {
	// Yes skips the confirmation.
	Yes bool
	// Interactive says In is a person at a terminal who can confirm.
	Interactive bool
	// In is where the confirmation is read from.
	In io.Reader
}

// ErrNotConfirmed is returned when a purge was not confirmed.
var ErrNotConfirmed = errors.New("purge not confirmed: nothing was deleted")

// Purge deletes every message of a queue (PurgeQueue) after asking the
// person at the terminal to type the queue's name. Without a terminal it
// refuses unless Yes is set.
func (c *Client) Purge(ctx context.Context, queue string, o PurgeOptions) error {
	q, err := c.resolve(ctx, queue)
	if err != nil {
		return err
	}
	if !o.Yes {
		if !o.Interactive || o.In == nil {
			return errors.New("refusing to purge without confirmation: standard input is not a terminal; pass --yes to purge anyway")
		}
		depth := c.depth(ctx, q)
		fmt.Fprintf(c.Out, "Purge %s? Its %d visible messages (and any in flight or delayed) will be deleted for good.\n", q.Name, depth)
		fmt.Fprintf(c.Out, "Type the queue name to confirm: ")
		line, err := bufio.NewReader(o.In).ReadString('\n')
		if err != nil && line == "" {
			return ErrNotConfirmed
		}
		if strings.TrimSpace(line) != q.Name {
			return ErrNotConfirmed
		}
	}
	if _, err := c.SQS.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(q.URL)}); err != nil {
		return fmt.Errorf("purge %s: %w", q.Name, err)
	}
	fmt.Fprintf(c.Out, "purged %s\n", q.Name)
	return nil
}
