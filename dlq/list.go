package dlq

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/tidemq/tidemq"
)

// DLQInfo describes one dead-letter queue.
type DLQInfo struct {
	Name, URL, ARN string
	// Sources are the queues whose RedrivePolicy names this one, with
	// their maxReceiveCount. It is empty for a DLQ that no RedrivePolicy
	// names any more (its source was deleted): one that holds dead-lettered
	// messages (tidemq) or is named like a DLQ.
	Sources []Source
	// Visible, InFlight and Delayed add up to the true depth.
	Visible, InFlight, Delayed int
	// OldestAge is the age of the oldest message; -1 when the endpoint
	// cannot tell (AWS: it is a CloudWatch metric).
	OldestAge        time.Duration
	RetentionSeconds int
	// Missing is true when a RedrivePolicy names a queue that does not
	// exist (or is out of reach).
	Missing bool
}

// Depth is visible + in flight + delayed.
func (d DLQInfo) Depth() int { return d.Visible + d.InFlight + d.Delayed }

// Source is a queue that dead-letters into a DLQ.
type Source struct {
	Name            string
	MaxReceiveCount int
}

// queueStats is one queue as ListQueueStats (or GetQueueAttributes) shows
// it: the server's own snapshot type, under its URL.
type queueStats = tidemq.ListedQueue

// DLQs finds every dead-letter queue, its sources, depth and, on tidemq,
// the age of its oldest message. A dead-letter queue is a queue some
// RedrivePolicy points to, a queue named like one
// (tidemq.NamedLikeDeadLetterQueue) and, on tidemq, a queue that holds
// dead-lettered messages: the last two stay listed after their source
// queue is deleted.
func (c *Client) DLQs(ctx context.Context, prefix string) ([]DLQInfo, error) {
	tide, err := c.IsTidemq(ctx)
	if err != nil {
		return nil, err
	}
	var all []queueStats
	if tide {
		var out struct {
			Queues []queueStats `json:"Queues"`
		}
		if err := c.ext(ctx, "ListQueueStats", map[string]string{}, &out); err != nil {
			return nil, err
		}
		all = out.Queues
	} else if all, err = c.statsFromAttributes(ctx); err != nil {
		return nil, err
	}
	byARN := make(map[string]*queueStats, len(all))
	for i := range all {
		byARN[all[i].ARN] = &all[i]
	}
	dlqs := make(map[string]*DLQInfo)
	dlq := func(arn string) *DLQInfo {
		d := dlqs[arn]
		if d == nil {
			d = &DLQInfo{ARN: arn, Name: nameOfURL(arn), OldestAge: -1}
			if t := byARN[arn]; t != nil {
				d.URL, d.Visible, d.InFlight, d.Delayed, d.RetentionSeconds = t.URL, t.Visible, t.InFlight, t.Delayed, t.RetentionSeconds
				if t.AgeKnown {
					d.OldestAge = time.Duration(t.OldestAgeSeconds * float64(time.Second))
				}
			} else {
				d.Missing = true
			}
			dlqs[arn] = d
		}
		return d
	}
	for _, q := range all {
		if q.DeadLetterTarget != "" {
			d := dlq(q.DeadLetterTarget)
			d.Sources = append(d.Sources, Source{Name: nameOfURL(q.URL), MaxReceiveCount: q.MaxReceiveCount})
		}
	}
	for _, q := range all {
		if q.IsDeadLetterQueue || tidemq.NamedLikeDeadLetterQueue(nameOfURL(q.URL)) {
			dlq(q.ARN)
		}
	}
	out := make([]DLQInfo, 0, len(dlqs))
	for _, d := range dlqs {
		if !strings.HasPrefix(d.Name, prefix) {
			continue
		}
		sort.Slice(d.Sources, func(i, j int) bool { return d.Sources[i].Name < d.Sources[j].Name })
		out = append(out, *d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// statsFromAttributes reads every queue's attributes (plain SQS).
func (c *Client) statsFromAttributes(ctx context.Context) ([]queueStats, error) {
	var urls []string
	p := sqs.NewListQueuesPaginator(c.SQS, &sqs.ListQueuesInput{MaxResults: aws.Int32(1000)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list queues: %w", err)
		}
		urls = append(urls, page.QueueUrls...)
	}
	var out []queueStats
	for _, u := range urls {
		a, err := c.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(u),
			AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
		if err != nil {
			c.warnf("%s: %v", nameOfURL(u), err)
			continue
		}
		out = append(out, queueStats{URL: u, QueueSnapshot: tidemq.SnapshotOfAttributes(u, a.Attributes)})
	}
	return out, nil
}

// List prints every dead-letter queue as a table.
func (c *Client) List(ctx context.Context, prefix string) error {
	dlqs, err := c.DLQs(ctx, prefix)
	if err != nil {
		return err
	}
	if len(dlqs) == 0 {
		fmt.Fprintln(c.Out, "no dead-letter queues (no RedrivePolicy names a queue, and no queue is named like a DLQ)")
		return nil
	}
	tw := tabwriter.NewWriter(c.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DLQ\tDEPTH\tVISIBLE\tIN FLIGHT\tDELAYED\tOLDEST\tRETENTION\tSOURCES (maxReceiveCount)")
	noAge, orphans := false, false
	for _, d := range dlqs {
		var srcs []string
		for _, s := range d.Sources {
			srcs = append(srcs, fmt.Sprintf("%s (%d)", s.Name, s.MaxReceiveCount))
		}
		if len(srcs) == 0 {
			srcs, orphans = []string{"(none)"}, true
		}
		if d.Missing {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t%s  [queue not found]\n", d.Name, strings.Join(srcs, ", "))
			continue
		}
		oldest := "-"
		switch {
		case d.Depth() == 0:
			oldest = "empty"
		case d.OldestAge >= 0:
			oldest = age(d.OldestAge)
		default:
			noAge = true
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", d.Name, d.Depth(), d.Visible, d.InFlight, d.Delayed,
			oldest, age(time.Duration(d.RetentionSeconds)*time.Second), strings.Join(srcs, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if orphans {
		fmt.Fprintln(c.Out, "\n(none): no RedrivePolicy names this queue (was its source queue deleted?); it is listed because it is named like a DLQ or holds dead-lettered messages.")
	}
	if noAge {
		fmt.Fprintln(c.Out, "\nOLDEST is not available from GetQueueAttributes: on AWS it is the CloudWatch metric ApproximateAgeOfOldestMessage.")
	}
	return nil
}
