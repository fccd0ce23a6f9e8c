package dlq

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/uuid"
)

// Redrive markers: message attributes a marked redrive adds, so that a
// consumer can tell a replayed message from a fresh one (and give up on one
// that has been replayed too often). They leave the body alone, so an SNS
// envelope arrives exactly as it was sent; consumers that keep their markers
// in the body itself use BodyEdits instead.
const (
	MarkRedriven     = "tidemq.redriven"      // String "true"
	MarkRedriveCount = "tidemq.redrive-count" // Number: the message's own count plus one
	MarkFinalPass    = "tidemq.final-pass"    // String "true", with --final-pass
)

// RedriveOptions are the options of Redrive.
type RedriveOptions struct {
	// To is the destination queue (name, URL or ARN). "" sends each message
	// back to its source (DeadLetterQueueSourceArn), or to the DLQ's only
	// source queue for messages without one.
	To string
	// Rate caps messages per second (0: no cap).
	Rate int
	// Limit stops after moving this many messages (0: all).
	Limit int
	// Filter moves only the messages it matches.
	Filter *Filter
	// Mark adds the redrive markers; FinalPass adds tidemq.final-pass too.
	Mark, FinalPass bool
	// BodyEdits change the JSON body before it is sent (--body-set), in
	// order; a message they cannot apply to is not redriven.
	BodyEdits []*BodyEdit
	// DryRun shows what would move and moves nothing.
	DryRun bool
	// AllowReceive allows a dry run on AWS, where looking takes a receive.
	AllowReceive bool
	// Visibility is how long, in seconds, a received message stays hidden
	// while it is moved (or held back by the filter); 0 means 60.
	Visibility int32
	// Force redrives a queue that is not a dead-letter queue (see
	// NotADLQError).
	Force bool
}

// usesMoveTask reports whether the redrive can be a move task: nothing is
// asked that a task cannot do.
func (o RedriveOptions) usesMoveTask() bool {
	return o.Limit == 0 && o.Filter == nil && !o.Mark && !o.FinalPass && !o.DryRun && len(o.BodyEdits) == 0
}

// RedriveResult counts what a redrive did.
type RedriveResult struct {
	Moved    int
	Skipped  int // not matched by the filter, left in the queue
	NoTarget int // no destination could be found, left in the queue
	Failed   int
	// NotRedriven names every message the redrive was asked to move but
	// left in the queue (no destination, or one it cannot be sent to), with
	// the reason. A dry run lists those it would leave.
	NotRedriven []NotRedriven
	// CameBack names the messages this pass moved that were dead-lettered
	// again during the pass (a consumer that fails them at once): they
	// were not moved a second time.
	CameBack []CameBack
	// Task is the final state of the move task, when one was used.
	Task *types.ListMessageMoveTasksResultEntry
}

// NotRedriven is a message a redrive left where it was, and why.
type NotRedriven struct {
	MessageID string
	Reason    string
}

// Partial reports whether the redrive left messages it was asked to move
// (filtered-out messages were not asked for), or moved messages that came
// back to the DLQ during the pass.
func (r *RedriveResult) Partial() bool {
	return r != nil && (len(r.NotRedriven) > 0 || r.Failed > 0 || len(r.CameBack) > 0)
}

func (r *RedriveResult) keep(m *Message, reason string) {
	r.NotRedriven = append(r.NotRedriven, NotRedriven{MessageID: m.MessageID, Reason: reason})
}

// Redrive moves the messages of a dead-letter queue back to their sources
// or to another queue.
//
// With nothing but --to and --rate, it starts a message move task
// (StartMessageMoveTask) and follows it until it ends. Otherwise it
// receives, sends and deletes, one message at a time: the body's bytes,
// the message attributes and the FIFO group are kept, the deduplication id
// is new, and a message is deleted only after its send was acknowledged,
// so a failure can duplicate a message but never lose one. A pass is
// bounded by what was in the DLQ when it started (see pass): it ends after
// three empty receives in a row or when it has handled that many messages,
// and never moves a message twice.
//
// A queue that is not a dead-letter queue is refused unless o.Force (see
// NotADLQError).
func (c *Client) Redrive(ctx context.Context, queue string, o RedriveOptions) (*RedriveResult, error) {
	src, err := c.resolve(ctx, queue)
	if err != nil {
		return nil, err
	}
	var dst *queueRef
	if o.To != "" {
		if dst, err = c.resolve(ctx, o.To); err != nil {
			return nil, err
		}
		if dst.URL == src.URL {
			return nil, errors.New("--to names the queue being redriven")
		}
	}
	if o.Visibility <= 0 {
		o.Visibility = 60
	}
	targets := &targets{c: c, dlq: src, fixed: dst, byARN: make(map[string]*queueRef)}
	if err := targets.loadSources(ctx); err != nil {
		return nil, err
	}
	if err := c.checkIsDLQ(ctx, src, targets.sources); err != nil {
		if !o.Force {
			return nil, err
		}
		targets.forced = true
		targets.onlyProblem = src.Name + " is not a dead-letter queue (--force): name a destination with --to"
		c.warnf("%s is not a dead-letter queue; redriving it because of --force", src.Name)
	}
	if o.usesMoveTask() {
		return c.redriveByTask(ctx, src, dst, targets, o)
	}
	if o.DryRun {
		return c.dryRun(ctx, src, targets, o)
	}
	return c.redriveByReceive(ctx, src, targets, o, nil, c.passBudget(ctx, src))
}

// passBudget is how many messages a redrive pass of q may handle: its true
// depth now. AWS's counters are approximate and lag (about a minute): a 0
// there is taken as unknown, and the pass is then bounded by what it
// recognises (see pass) and by its empty receives.
func (c *Client) passBudget(ctx context.Context, q *queueRef) int64 {
	n := c.trueDepth(ctx, q)
	if n == 0 {
		if tide, err := c.IsTidemq(ctx); err != nil || !tide {
			return -1
		}
	}
	return n
}

// redriveByTask redrives with a message move task, and finishes message by
// message what a task cannot do. SQS starts a task only on a queue that
// some RedrivePolicy names, and without a destination a task sends each
// message back to its DeadLetterQueueSourceArn: a message sent to the DLQ
// directly has none (the task ends FAILED, CouldNotDetermineMessageSource),
// and a deleted source queue stops the task (FAILED,
// AWS.SimpleQueueService.NonExistentQueue). Those messages go
// to the DLQ's only source queue, or stay and are named.
func (c *Client) redriveByTask(ctx context.Context, src, dst *queueRef, tg *targets, o RedriveOptions) (*RedriveResult, error) {
	if err := tg.loadSources(ctx); err != nil {
		return nil, err
	}
	// What was in the DLQ when the redrive started bounds the whole
	// redrive: the task's moves and what is then done message by message.
	depth := c.passBudget(ctx, src)
	if len(tg.sources) == 0 {
		if tg.forced {
			fmt.Fprintf(c.Out, "no RedrivePolicy names %s, so a message move task cannot start: redriving message by message\n", src.Name)
		} else {
			fmt.Fprintf(c.Out, "no RedrivePolicy names %s (was its source queue deleted?), so a message move task cannot start: redriving message by message\n", src.Name)
		}
		return c.redriveByReceive(ctx, src, tg, o, nil, depth)
	}
	res, err := c.moveTask(ctx, src, dst, o.Rate)
	if res == nil || res.Task == nil || dst != nil || ctx.Err() != nil {
		return res, err
	}
	t := res.Task
	switch status := aws.ToString(t.Status); {
	case status == "FAILED":
		fmt.Fprintf(c.Out, "the move task stopped (%s): a message sent to %s directly has no DeadLetterQueueSourceArn, or its source queue is gone; redriving the rest message by message\n",
			aws.ToString(t.FailureReason), src.Name)
	case status == "COMPLETED" && t.ApproximateNumberOfMessagesMoved < aws.ToInt64(t.ApproximateNumberOfMessagesToMove) && c.depth(ctx, src) > 0:
		fmt.Fprintf(c.Out, "the move task left messages in %s; redriving them message by message\n", src.Name)
	default:
		return res, err
	}
	// The task's moves count in the summary and against the pass's bound.
	left := int64(-1)
	if depth >= 0 {
		if left = depth - int64(res.Moved); left <= 0 {
			fmt.Fprintf(c.Out, "%s held %d messages when the redrive started and the task moved %d: the messages there now arrived during the redrive, and wait for the next one\n",
				src.Name, depth, res.Moved)
			return res, err
		}
	}
	return c.redriveByReceive(ctx, src, tg, o, &RedriveResult{Moved: res.Moved, Task: res.Task}, left)
}

// --- move task ---

func (c *Client) moveTask(ctx context.Context, src, dst *queueRef, rate int) (*RedriveResult, error) {
	in := &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(src.ARN)}
	to := "each message's source queue"
	if dst != nil {
		in.DestinationArn = aws.String(dst.ARN)
		to = dst.Name
	}
	if rate > 0 {
		in.MaxNumberOfMessagesPerSecond = aws.Int32(int32(rate))
	}
	if _, err := c.SQS.StartMessageMoveTask(ctx, in); err != nil {
		return nil, fmt.Errorf("start message move task: %w", err)
	}
	fmt.Fprintf(c.Out, "started a message move task: %s → %s\n", src.Name, to)
	poll := c.TaskPoll
	if poll <= 0 {
		poll = time.Second
	}
	var bar *bar
	defer func() { bar.finish() }()
	for {
		out, err := c.SQS.ListMessageMoveTasks(context.WithoutCancel(ctx), &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(src.ARN), MaxResults: aws.Int32(1)})
		if err != nil {
			return nil, fmt.Errorf("list message move tasks: %w", err)
		}
		if len(out.Results) == 0 {
			return nil, errors.New("the move task has disappeared from ListMessageMoveTasks")
		}
		t := out.Results[0]
		if bar == nil {
			bar = c.newBar(aws.ToInt64(t.ApproximateNumberOfMessagesToMove), "moving")
		}
		bar.set(t.ApproximateNumberOfMessagesMoved)
		status := aws.ToString(t.Status)
		if status != "RUNNING" && status != "CANCELLING" {
			bar.finish()
			res := &RedriveResult{Moved: int(t.ApproximateNumberOfMessagesMoved), Task: &t}
			fmt.Fprintf(c.Out, "move task %s: moved %d of %d messages\n", status, t.ApproximateNumberOfMessagesMoved, aws.ToInt64(t.ApproximateNumberOfMessagesToMove))
			if status == "FAILED" {
				return res, fmt.Errorf("the move task failed: %s", aws.ToString(t.FailureReason))
			}
			return res, nil
		}
		select {
		case <-ctx.Done():
			// Interrupted: stop the task rather than leave it running unseen.
			if h := aws.ToString(t.TaskHandle); h != "" {
				cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_, cerr := c.SQS.CancelMessageMoveTask(cctx, &sqs.CancelMessageMoveTaskInput{TaskHandle: aws.String(h)})
				cancel()
				if cerr != nil {
					c.warnf("the move task is still running: cancel failed: %v", cerr)
				} else {
					fmt.Fprintf(c.Out, "move task cancelled\n")
				}
			}
			return &RedriveResult{Moved: int(t.ApproximateNumberOfMessagesMoved), Task: &t}, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// --- destinations ---

// targets finds where each message goes.
type targets struct {
	c     *Client
	dlq   *queueRef
	fixed *queueRef
	byARN map[string]*queueRef
	// sources are the names of the queues whose RedrivePolicy names the
	// DLQ (ListDeadLetterSourceQueues), loaded once.
	sources []string
	loaded  bool
	// forced: the queue is not a DLQ and is redriven because of --force.
	forced bool
	// only is the DLQ's one source queue, for messages that name none
	// (sent to the DLQ directly); nil when there are none or several, and
	// onlyProblem then says why.
	only        *queueRef
	onlyProblem string
}

// loadSources lists the queues whose RedrivePolicy names the DLQ.
func (t *targets) loadSources(ctx context.Context) error {
	if t.loaded {
		return nil
	}
	var urls []string
	p := sqs.NewListDeadLetterSourceQueuesPaginator(t.c.SQS, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: aws.String(t.dlq.URL), MaxResults: aws.Int32(1000)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list the source queues of %s: %w", t.dlq.Name, err)
		}
		urls = append(urls, page.QueueUrls...)
	}
	t.loaded = true
	for _, u := range urls {
		t.sources = append(t.sources, nameOfURL(u))
	}
	switch len(urls) {
	case 0:
		t.onlyProblem = "no RedrivePolicy names " + t.dlq.Name + " (was its source queue deleted?): name a destination with --to"
	case 1:
		q, err := t.c.resolve(ctx, urls[0])
		if err != nil {
			t.onlyProblem = "its only source queue: " + err.Error()
		}
		t.only = q
	default:
		t.onlyProblem = fmt.Sprintf("%d queues name %s in their RedrivePolicy (%s), so which one it came from is unknown: choose with --to (a --filter can split the messages between them)",
			len(urls), t.dlq.Name, strings.Join(t.sources, ", "))
	}
	return nil
}

// of returns where m goes; the error says why it cannot go anywhere.
func (t *targets) of(ctx context.Context, m *Message) (*queueRef, error) {
	if t.fixed != nil {
		return t.fixed, nil
	}
	if arn := m.SourceARN(); arn != "" {
		if q, ok := t.byARN[arn]; ok {
			return q, nil
		}
		q, err := t.c.resolve(ctx, arn)
		if errors.Is(err, ErrNoSuchQueue) {
			return nil, fmt.Errorf("its source queue %s (DeadLetterQueueSourceArn) does not exist any more: name a destination with --to", nameOfURL(arn))
		}
		if err != nil {
			return nil, fmt.Errorf("its source queue %s: %w", nameOfURL(arn), err)
		}
		t.byARN[arn] = q
		return q, nil
	}
	if err := t.loadSources(ctx); err != nil {
		return nil, err
	}
	if t.only == nil {
		return nil, fmt.Errorf("it has no DeadLetterQueueSourceArn (it was sent to %s directly) and %s", t.dlq.Name, t.onlyProblem)
	}
	return t.only, nil
}

// --- receive, send, delete ---

// editBody applies the body edits to m's body; changes describes each
// ("PATH: before → after"), for a dry run.
func editBody(m *Message, edits []*BodyEdit) (body string, changes []string, err error) {
	body = m.Body
	for _, e := range edits {
		var before, after string
		if body, before, after, err = e.Apply(body); err != nil {
			return "", nil, fmt.Errorf("--body-set %s: %w", e, err)
		}
		if before == "" {
			before = "(absent)"
		}
		changes = append(changes, fmt.Sprintf("%s: %s → %s", e.pathString(), before, after))
	}
	return body, changes, nil
}

// sendInput builds the send of m to dst: the body as received (or as the
// body edits make it), every message attribute (plus the markers), the
// trace header, and for a FIFO destination the message's group and a new
// deduplication id.
func sendInput(m *Message, dst *queueRef, o RedriveOptions) (*sqs.SendMessageInput, error) {
	body, _, err := editBody(m, o.BodyEdits)
	if err != nil {
		return nil, err
	}
	in := &sqs.SendMessageInput{QueueUrl: aws.String(dst.URL), MessageBody: aws.String(body)}
	attrs := make(map[string]types.MessageAttributeValue, len(m.MessageAttributes)+3)
	for k, v := range m.MessageAttributes {
		attrs[k] = v
	}
	if o.Mark || o.FinalPass {
		count := 0
		if v, ok := m.MessageAttributes[MarkRedriveCount]; ok {
			count, _ = strconv.Atoi(strings.TrimSpace(aws.ToString(v.StringValue)))
		}
		attrs[MarkRedriven] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String("true")}
		attrs[MarkRedriveCount] = types.MessageAttributeValue{DataType: aws.String("Number"), StringValue: aws.String(strconv.Itoa(count + 1))}
		if o.FinalPass {
			attrs[MarkFinalPass] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String("true")}
		}
	}
	if len(attrs) > 0 {
		in.MessageAttributes = attrs
	}
	if t := m.Attributes["AWSTraceHeader"]; t != "" {
		in.MessageSystemAttributes = map[string]types.MessageSystemAttributeValue{
			"AWSTraceHeader": {DataType: aws.String("String"), StringValue: aws.String(t)},
		}
	}
	if dst.FIFO {
		g := m.GroupID()
		if g == "" {
			return nil, fmt.Errorf("message %s has no MessageGroupId and %s is a FIFO queue", m.MessageID, dst.Name)
		}
		in.MessageGroupId = aws.String(g)
		in.MessageDeduplicationId = aws.String(uuid.NewString())
	}
	return in, nil
}

// redriveByReceive receives, sends and deletes. res holds what was done
// before (a move task's moves), or is nil; budget is how many messages the
// pass may handle (what was in the DLQ when the redrive started, less what
// a task moved; <0: unknown).
func (c *Client) redriveByReceive(ctx context.Context, src *queueRef, tg *targets, o RedriveOptions, res *RedriveResult, budget int64) (*RedriveResult, error) {
	if res == nil {
		res = &RedriveResult{}
	}
	p := newPass(c.now(), budget)
	total := budget
	if o.Limit > 0 && (total < 0 || int64(o.Limit) < total) {
		total = int64(o.Limit)
	}
	b := c.newBar(total, "redriving")
	defer b.finish()
	// held are messages received but not moved (filtered out, no target):
	// kept invisible until the end so they are not received again, then
	// made visible at once.
	var held []*Message
	seen := make(map[string]bool)
	defer func() { c.release(context.WithoutCancel(ctx), src, held) }()
	var tick <-chan time.Time
	if o.Rate > 0 {
		t := time.NewTicker(time.Second / time.Duration(o.Rate))
		defer t.Stop()
		tick = t.C
	}
	start := time.Now()
	var runErr error
	movedBefore := res.Moved
loop:
	for empty := 0; empty < c.emptyPolls() && (o.Limit == 0 || res.Moved-movedBefore < o.Limit) && !p.exhausted(); {
		wait := int32(0)
		if empty > 0 {
			wait = c.PollWait
		}
		n := int32(10)
		if o.Limit > 0 {
			n = int32(min(10, o.Limit-(res.Moved-movedBefore)))
		}
		if p.budget > 0 && p.budget < int64(n) {
			n = int32(p.budget)
		}
		msgs, err := c.receiveBatch(ctx, src, n, o.Visibility, wait)
		if err != nil {
			runErr = err
			break
		}
		fresh := 0
		for i, m := range msgs {
			if seen[m.MessageID] {
				held = append(held, m) // seen again after its visibility ended: hold the new handle
				continue
			}
			seen[m.MessageID] = true
			fresh++
			if cb, ok := p.cameBack(m); ok {
				res.CameBack = append(res.CameBack, cb)
				held = append(held, m)
				continue
			}
			if (o.Limit > 0 && res.Moved-movedBefore >= o.Limit) || p.exhausted() {
				held = append(held, msgs[i:]...)
				break loop
			}
			if !o.Filter.Match(m) {
				res.Skipped++
				p.use()
				b.add(1)
				held = append(held, m)
				continue
			}
			dst, err := tg.of(ctx, m)
			if err != nil {
				res.NoTarget++
				res.keep(m, err.Error())
				p.use()
				b.add(1)
				held = append(held, m)
				continue
			}
			in, err := sendInput(m, dst, o)
			if err != nil {
				res.keep(m, err.Error())
				p.use()
				b.add(1)
				held = append(held, m)
				continue
			}
			if tick != nil {
				select {
				case <-tick:
				case <-ctx.Done():
					held = append(held, msgs[i:]...)
					runErr = ctx.Err()
					break loop
				}
			}
			sent, err := c.SQS.SendMessage(ctx, in)
			if err != nil {
				// Not sent: keep it (and, for FIFO order, everything after it).
				res.Failed++
				held = append(held, msgs[i:]...)
				runErr = fmt.Errorf("send %s to %s: %w", m.MessageID, dst.Name, err)
				break loop
			}
			if _, err := c.SQS.DeleteMessage(context.WithoutCancel(ctx), &sqs.DeleteMessageInput{QueueUrl: aws.String(src.URL), ReceiptHandle: aws.String(m.ReceiptHandle)}); err != nil {
				c.warnf("message %s was sent to %s but could not be deleted from %s (it is now in both): %v", m.MessageID, dst.Name, src.Name, err)
			}
			p.moved(m, aws.ToString(sent.MessageId), aws.ToString(in.MessageBody), dst.Name)
			res.Moved++
			b.add(1)
		}
		if fresh == 0 {
			empty++
		} else {
			empty = 0
		}
	}
	b.finish()
	if runErr == nil && res.Moved > movedBefore {
		c.scanCameBack(ctx, src, p, seen, res, o.Visibility)
	}
	fmt.Fprintf(c.Out, "%s: moved %d", src.Name, res.Moved)
	if o.Filter != nil {
		fmt.Fprintf(c.Out, ", %d did not match the filter", res.Skipped)
	}
	if n := len(res.NotRedriven); n > 0 {
		fmt.Fprintf(c.Out, ", %d not redriven", n)
	}
	if res.Failed > 0 {
		fmt.Fprintf(c.Out, ", %d failed", res.Failed)
	}
	if n := len(res.CameBack); n > 0 {
		fmt.Fprintf(c.Out, ", %d came back", n)
	}
	if o.Mark || o.FinalPass {
		fmt.Fprintf(c.Out, " (marked %s", MarkRedriven)
		if o.FinalPass {
			fmt.Fprintf(c.Out, ", %s", MarkFinalPass)
		}
		fmt.Fprintf(c.Out, ")")
	}
	if len(o.BodyEdits) > 0 {
		edits := make([]string, len(o.BodyEdits))
		for i, e := range o.BodyEdits {
			edits[i] = e.String()
		}
		fmt.Fprintf(c.Out, " (body: %s)", strings.Join(edits, ", "))
	}
	fmt.Fprintf(c.Out, " in %s\n", time.Since(start).Round(time.Millisecond))
	if p.exhausted() && budget > 0 {
		fmt.Fprintf(c.Out, "stopped after the %d messages %s held when the redrive started; messages that arrived since wait for the next pass\n", budget, src.Name)
	}
	c.reportNotRedriven(src, res, "not redriven, still in")
	c.reportCameBack(src, res)
	return res, runErr
}

// reportNotRedriven names each message left behind, and why.
func (c *Client) reportNotRedriven(src *queueRef, res *RedriveResult, what string) {
	if len(res.NotRedriven) == 0 {
		return
	}
	fmt.Fprintf(c.Out, "%s %s:\n", what, src.Name)
	for _, n := range res.NotRedriven {
		fmt.Fprintf(c.Out, "  %s: %s\n", n.MessageID, n.Reason)
	}
}

// dryRun shows what a redrive would move.
func (c *Client) dryRun(ctx context.Context, src *queueRef, tg *targets, o RedriveOptions) (*RedriveResult, error) {
	max := 1000
	if o.Limit > 0 && o.Filter == nil {
		max = o.Limit
	}
	msgs, err := c.look(ctx, src, max, false, o.AllowReceive, o.Visibility)
	if err != nil {
		return nil, err
	}
	res := &RedriveResult{}
	for _, m := range msgs {
		if !m.DelayedUntil.IsZero() {
			fmt.Fprintf(c.Out, "would wait for %s: delayed until %s, it cannot be received before\n", m.MessageID, m.DelayedUntil.UTC().Format(time.RFC3339))
			continue
		}
		if !o.Filter.Match(m) {
			res.Skipped++
			continue
		}
		if o.Limit > 0 && res.Moved >= o.Limit {
			break
		}
		dst, err := tg.of(ctx, m)
		if err != nil {
			fmt.Fprintf(c.Out, "would keep %s: %v\n", m.MessageID, err)
			res.NoTarget++
			res.keep(m, err.Error())
			continue
		}
		line := fmt.Sprintf("would move %s → %s", m.MessageID, dst.Name)
		if g := m.GroupID(); g != "" {
			line += " (group " + g + ")"
		}
		in, err := sendInput(m, dst, o)
		if err != nil {
			fmt.Fprintf(c.Out, "would keep %s: %v\n", m.MessageID, err)
			res.keep(m, err.Error())
			continue
		}
		if o.Mark || o.FinalPass {
			line += fmt.Sprintf(" with %s=%s", MarkRedriveCount, aws.ToString(in.MessageAttributes[MarkRedriveCount].StringValue))
		}
		fmt.Fprintln(c.Out, line)
		if _, changes, _ := editBody(m, o.BodyEdits); len(changes) > 0 {
			for _, ch := range changes {
				fmt.Fprintf(c.Out, "    %s\n", ch)
			}
		}
		res.Moved++
	}
	fmt.Fprintf(c.Out, "dry run: %d would move", res.Moved)
	if o.Filter != nil {
		fmt.Fprintf(c.Out, ", %d do not match the filter", res.Skipped)
	}
	if n := len(res.NotRedriven); n > 0 {
		fmt.Fprintf(c.Out, ", %d would not be redriven", n)
	}
	fmt.Fprintf(c.Out, "; nothing was moved\n")
	return res, nil
}

// depth is a queue's visible messages (-1 if unknown).
func (c *Client) depth(ctx context.Context, q *queueRef) int64 {
	return c.countOf(ctx, q, types.QueueAttributeNameApproximateNumberOfMessages)
}

// trueDepth is a queue's visible, in-flight and delayed messages: what a
// redrive pass may handle (-1 if unknown).
func (c *Client) trueDepth(ctx context.Context, q *queueRef) int64 {
	return c.countOf(ctx, q, types.QueueAttributeNameApproximateNumberOfMessages,
		types.QueueAttributeNameApproximateNumberOfMessagesNotVisible, types.QueueAttributeNameApproximateNumberOfMessagesDelayed)
}

// countOf adds up counters of a queue (-1 if one is unknown).
func (c *Client) countOf(ctx context.Context, q *queueRef, names ...types.QueueAttributeName) int64 {
	out, err := c.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(q.URL), AttributeNames: names})
	if err != nil {
		return -1
	}
	var sum int64
	for _, name := range names {
		n, err := strconv.ParseInt(out.Attributes[string(name)], 10, 64)
		if err != nil {
			return -1
		}
		sum += n
	}
	return sum
}
