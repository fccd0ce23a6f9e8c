package dlq

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// PeekOptions are the options of Peek.
type PeekOptions struct {
	// Max is how many messages to show; 0 means 10.
	Max int
	// IncludeInflight also shows messages that are in flight (tidemq
	// only). Delayed messages are always shown on tidemq, with their delay
	// and when they become receivable.
	IncludeInflight bool
	// AllowReceive allows peeking on AWS, where it takes a receive: every
	// message shown has its receive count raised by one.
	AllowReceive bool
	// Visibility is how long, in seconds, messages received on AWS stay
	// hidden while the peek collects them; 0 means 30. They are made
	// visible again at the end.
	Visibility int32
	// Filter, when set, shows only the messages it matches.
	Filter *Filter
}

// ErrNeedsReceive is returned when an operation would have to receive
// messages on AWS and the caller has not allowed it.
var ErrNeedsReceive = errors.New("on AWS, looking at messages takes a receive: each message's receive count goes up by one " +
	"(and a queue with its own redrive policy may move it). Pass --allow-receive to accept that")

// Peek shows the messages of a queue without consuming them: body (JSON
// indented, SNS envelopes unwrapped one level), attributes, receive count,
// source queue, age and, on tidemq, the message's history: who received it
// and why it was dead-lettered.
func (c *Client) Peek(ctx context.Context, queue string, o PeekOptions) error {
	q, err := c.resolve(ctx, queue)
	if err != nil {
		return err
	}
	msgs, err := c.look(ctx, q, o.Max, o.IncludeInflight, o.AllowReceive, o.Visibility)
	if err != nil {
		return err
	}
	msgs = o.Filter.Select(msgs)
	if len(msgs) == 0 {
		fmt.Fprintf(c.Out, "%s: no messages\n", q.Name)
		return nil
	}
	now := c.now()
	for i, m := range msgs {
		if i > 0 {
			fmt.Fprintln(c.Out)
		}
		c.render(c.Out, q, m, i+1, len(msgs), now)
	}
	return nil
}

// look returns up to max messages without consuming them, warning about
// what that costs on AWS.
func (c *Client) look(ctx context.Context, q *queueRef, max int, inflight, allowReceive bool, visibility int32) ([]*Message, error) {
	if max <= 0 {
		max = 10
	}
	if visibility <= 0 {
		visibility = 30
	}
	tide, err := c.IsTidemq(ctx)
	if err != nil {
		return nil, err
	}
	if !tide {
		if !allowReceive {
			return nil, ErrNeedsReceive
		}
		c.warnf("not tidemq: peeking by receiving with a %ds visibility timeout; the receive count of every message shown goes up by one", visibility)
		if inflight {
			c.warnf("in-flight messages cannot be seen on AWS")
		}
	}
	return c.inspect(ctx, q, max, inflight, visibility)
}

// render writes one message for a reader.
func (c *Client) render(w io.Writer, q *queueRef, m *Message, i, n int, now time.Time) {
	fmt.Fprintf(w, "── %s  message %d of %d  %s\n", q.Name, i, n, m.MessageID)
	kv := func(k, format string, args ...any) {
		fmt.Fprintf(w, "  %-13s"+format+"\n", append([]any{k}, args...)...)
	}
	if sent := m.Sent(); !sent.IsZero() {
		kv("sent", "%s (%s ago)", sent.UTC().Format(time.RFC3339), age(now.Sub(sent)))
	}
	if !m.DelayedUntil.IsZero() {
		kv("delayed", "%s: receivable at %s (in %s)", age(m.Delay()), m.DelayedUntil.UTC().Format(time.RFC3339), age(m.DelayedUntil.Sub(now)))
	}
	if !m.InvisibleUntil.IsZero() {
		kv("in flight", "until %s (in %s)", m.InvisibleUntil.UTC().Format(time.RFC3339), age(m.InvisibleUntil.Sub(now)))
	}
	kv("receives", "%d", m.ReceiveCount())
	if src := m.SourceARN(); src != "" {
		kv("source", "%s (%s)", nameOfURL(src), src)
	} else {
		kv("source", "unknown (no DeadLetterQueueSourceArn: sent to this queue directly)")
	}
	if g := m.GroupID(); g != "" {
		kv("group", "%s", g)
		kv("dedup id", "%s", m.Attributes["MessageDeduplicationId"])
	}
	if t := m.Attributes["AWSTraceHeader"]; t != "" {
		kv("trace", "%s", t)
	}
	if len(m.MessageAttributes) > 0 {
		fmt.Fprintf(w, "  attributes\n")
		for _, k := range sortedKeys(m.MessageAttributes) {
			v := m.MessageAttributes[k]
			fmt.Fprintf(w, "    %s (%s) = %s\n", k, deref(v.DataType), attrString(v))
		}
	}
	if env, ok := Unwrap(m.Body); ok {
		switch env.Kind {
		case "sns":
			fmt.Fprintf(w, "  body         SNS notification from %s", env.TopicArn)
			if env.Subject != "" {
				fmt.Fprintf(w, ", subject %q", env.Subject)
			}
			fmt.Fprintf(w, " (unwrapped; the body itself is kept as sent)\n")
		default:
			fmt.Fprintf(w, "  body         {\"Message\": <JSON string>} envelope (unwrapped; the body itself is kept as sent)\n")
		}
		fmt.Fprintln(w, indent(Pretty(env.Message), "    "))
	} else {
		fmt.Fprintf(w, "  body         %d bytes\n", len(m.Body))
		fmt.Fprintln(w, indent(Pretty(m.Body), "    "))
	}
	if len(m.History) > 0 {
		fmt.Fprintf(w, "  history\n")
		for _, ev := range m.History {
			fmt.Fprintf(w, "    %s  %-18s %-14s %s\n", time.UnixMilli(ev.Time).UTC().Format("2006-01-02T15:04:05.000Z"), ev.Kind, ev.Queue, describe(ev))
		}
		if why := Explain(m); why != "" {
			fmt.Fprintf(w, "  why          %s\n", why)
		}
	}
}

// describe renders a history event's client and detail.
func describe(ev HistoryEvent) string {
	var parts []string
	if ev.Detail != "" {
		parts = append(parts, ev.Detail)
	}
	if cl := ev.Client; cl != nil {
		var who []string
		if cl.AccessKey != "" {
			who = append(who, "key "+cl.AccessKey)
		}
		if cl.Addr != "" {
			who = append(who, "from "+cl.Addr)
		}
		if cl.UserAgent != "" {
			who = append(who, fmt.Sprintf("agent %q", cl.UserAgent))
		}
		if len(who) > 0 {
			parts = append(parts, "by "+strings.Join(who, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// Explain sums up, from its history, why a message was dead-lettered:
// which queue, after how many receives by which clients, and the reason.
// It is "" for a message without a dead-letter event.
func Explain(m *Message) string {
	var dead *HistoryEvent
	for i := range m.History {
		if m.History[i].Kind == "dead-lettered" {
			dead = &m.History[i]
		}
	}
	if dead == nil {
		return ""
	}
	receives := 0
	var clients []string
	seen := make(map[string]bool)
	for _, ev := range m.History {
		if ev.Kind != "received" || ev.Queue != dead.Queue || ev.Time > dead.Time {
			continue
		}
		receives++
		if ev.Client == nil {
			continue
		}
		id := ev.Client.AccessKey
		if ev.Client.UserAgent != "" {
			id += " (" + agentName(ev.Client.UserAgent) + ")"
		}
		if id != "" && !seen[id] {
			seen[id] = true
			clients = append(clients, id)
		}
	}
	s := fmt.Sprintf("dead-lettered from %s at %s after %d receive(s)", dead.Queue,
		time.UnixMilli(dead.Time).UTC().Format(time.RFC3339), receives)
	if len(clients) > 0 {
		s += " by " + strings.Join(clients, ", ")
	}
	if dead.Detail != "" {
		s += ": " + dead.Detail
	}
	return s
}

// agentName shortens a User-Agent: the SDK's "app/NAME" when the client set
// an application id, else the first word.
func agentName(ua string) string {
	fields := strings.Fields(ua)
	for _, f := range fields {
		if app, ok := strings.CutPrefix(f, "app/"); ok && app != "" {
			return app
		}
	}
	if len(fields) > 0 {
		return fields[0]
	}
	return ua
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// age renders a duration the way a person reads an age.
func age(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return d.Truncate(time.Second).String()
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
}
