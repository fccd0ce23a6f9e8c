package brokertest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/tidemq/tidemq"
)

// Scenarios are scripts in testdata/scenarios, in pebble's datadriven form:
// a command, "----", and what the broker answered. Each script is one
// check of the suite, run on a fresh broker and clock like every other, so
// one script runs against every driver (memory, Pebble, PostgreSQL). A
// broker whose answer differs fails the check with a diff; go test
// -rewrite writes the answers of the broker under test into the scripts.
//
// The commands:
//
//	create queue=q [fifo] [content-dedup]   then "Name=Value" lines: attributes
//	send queue=q [group=g] [dedup=d] [delay=s]   the input is the body
//	receive queue=q [max=n] [visibility=s]  one line per message: body, receives, group
//	delete queue=q body=b                   with the handle of b's latest receive
//	visibility queue=q body=b timeout=s     ChangeMessageVisibility, same handle
//	attrs queue=q                           the counts (ApproximateNumberOf...)
//	purge queue=q
//	advance by=<duration>                   moves the fake clock
//	restart                                 closes and reopens the broker (skipped without Reopen)
//
// An error is printed as "error: <Code>: <message>", so a script pins the
// wire's texts too.

// scenarioDir is testdata/scenarios beside this file.
func scenarioDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata", "scenarios")
}

// scenarioChecks are the scripts, one check each.
func scenarioChecks() []check {
	paths, _ := filepath.Glob(filepath.Join(scenarioDir(), "*.txt"))
	var out []check
	for _, p := range paths {
		out = append(out, check{strings.TrimSuffix(filepath.Base(p), ".txt"), func(e *env) { e.runScenario(p) }})
	}
	return out
}

// scenario is a script's state: the latest receipt handle of each body.
type scenario struct {
	*env
	handles map[string]string
}

func (e *env) runScenario(path string) {
	if _, err := os.Stat(path); err != nil {
		e.t.Fatal(err)
	}
	s := &scenario{env: e, handles: map[string]string{}}
	datadriven.RunTest(e.t, path, func(t *testing.T, d *datadriven.TestData) string {
		return s.command(t, d)
	})
}

// result prints err as a script shows it, or ok.
func result(err error, ok string) string {
	if err == nil {
		return ok + "\n"
	}
	var te *tidemq.Error
	if errors.As(err, &te) {
		return "error: " + te.Error() + "\n"
	}
	return "error: " + describe(err) + "\n"
}

func (s *scenario) command(t *testing.T, d *datadriven.TestData) string {
	str := func(key string) string {
		var v string
		d.MaybeScanArgs(t, key, &v)
		return v
	}
	num := func(key string) *int {
		if !d.HasArg(key) {
			return nil
		}
		var n int
		d.ScanArgs(t, key, &n)
		return &n
	}
	queue := str("queue")
	switch d.Cmd {
	case "create":
		attrs := map[string]string{}
		if d.HasArg("fifo") {
			attrs[tidemq.AttrFifoQueue] = "true"
		}
		if d.HasArg("content-dedup") {
			attrs[tidemq.AttrContentBasedDeduplication] = "true"
		}
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				attrs[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
		_, err := s.b.CreateQueue(s.ctx, tidemq.CreateQueueParams{Name: queue, Attributes: attrs})
		return result(err, "ok")
	case "send":
		entry := tidemq.SendEntry{Body: d.Input, MessageGroupID: str("group"), MessageDeduplicationID: str("dedup"), DelaySeconds: num("delay")}
		res, err := s.b.SendMessages(s.ctx, tidemq.SendMessagesParams{Queue: queue, Entries: []tidemq.SendEntry{entry}})
		if err == nil && len(res) == 1 {
			err = res[0].Err
		}
		return result(err, "sent")
	case "receive":
		ms, err := s.b.ReceiveMessages(s.ctx, tidemq.ReceiveMessagesParams{Queue: queue, MaxNumberOfMessages: num("max"),
			VisibilityTimeout: num("visibility"), WaitTimeSeconds: intp(0)})
		if err != nil {
			return result(err, "")
		}
		if len(ms) == 0 {
			return "empty\n"
		}
		var b strings.Builder
		for _, m := range ms {
			s.handles[m.Body] = m.ReceiptHandle
			fmt.Fprintf(&b, "%s receives=%d", m.Body, m.ApproximateReceiveCount)
			if m.MessageGroupID != "" {
				fmt.Fprintf(&b, " group=%s", m.MessageGroupID)
			}
			if m.DeadLetterQueueSourceARN != "" {
				fmt.Fprintf(&b, " from=%s", m.DeadLetterQueueSourceARN)
			}
			b.WriteString("\n")
		}
		return b.String()
	case "delete":
		errs, err := s.b.DeleteMessages(s.ctx, tidemq.DeleteMessagesParams{Queue: queue,
			Entries: []tidemq.DeleteEntry{{ReceiptHandle: s.handle(t, str("body"))}}})
		if err == nil && len(errs) == 1 {
			err = errs[0]
		}
		return result(err, "deleted")
	case "visibility":
		errs, err := s.b.ChangeMessageVisibility(s.ctx, tidemq.ChangeVisibilityParams{Queue: queue,
			Entries: []tidemq.ChangeVisibilityEntry{{ReceiptHandle: s.handle(t, str("body")), VisibilityTimeout: num("timeout")}}})
		if err == nil && len(errs) == 1 {
			err = errs[0]
		}
		return result(err, "changed")
	case "attrs":
		a, err := s.b.GetQueueAttributes(s.ctx, tidemq.GetQueueAttributesParams{Queue: queue, Names: []string{tidemq.AttrAll}})
		if err != nil {
			return result(err, "")
		}
		var lines []string
		for k, v := range a {
			if strings.HasPrefix(k, "ApproximateNumberOf") {
				lines = append(lines, k+"="+v)
			}
		}
		sort.Strings(lines)
		return strings.Join(lines, "\n") + "\n"
	case "purge":
		return result(s.b.PurgeQueue(s.ctx, tidemq.PurgeQueueParams{Queue: queue}), "purged")
	case "advance":
		by, err := time.ParseDuration(str("by"))
		if err != nil {
			t.Fatalf("%s: advance by=%q: %v", d.Pos, str("by"), err)
		}
		s.advance(by)
		return "now +" + s.now().Sub(Start).String() + "\n"
	case "restart":
		if s.h.Reopen == nil {
			t.Skip("the harness cannot reopen a broker")
		}
		s.restart()
		return "restarted\n"
	}
	t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	return ""
}

// handle is the receipt handle of body's latest receive.
func (s *scenario) handle(t *testing.T, body string) string {
	h, ok := s.handles[body]
	if !ok {
		t.Fatalf("no receive of %q yet", body)
	}
	return h
}
