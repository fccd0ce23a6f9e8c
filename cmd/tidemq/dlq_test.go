package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/api/sqs"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
)

// TestDLQRedriveExitStatus: `tidemq dlq redrive` exits 2 when it ran to its
// end but left messages it was asked to move (naming each on standard
// output), 0 when it moved everything, 1 on an error; --help says so.
func TestDLQRedriveExitStatus(t *testing.T) {
	eng, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1, Region: "us-east-1", AccountID: "000000000000",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	srv := httptest.NewServer(sqs.NewHandler(sqs.Config{Broker: eng, Logger: slog.New(slog.DiscardHandler)}))
	defer srv.Close()
	dir := t.TempDir()
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	t.Setenv("AWS_REGION", "us-east-1")

	ctx := context.Background()
	policy := `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:loader_dlq","maxReceiveCount":1}`
	for _, q := range []tidemq.CreateQueueParams{
		{Name: "loader_dlq"},
		{Name: "loader", Attributes: map[string]string{"RedrivePolicy": policy}},
		{Name: "loader-2", Attributes: map[string]string{"RedrivePolicy": policy}},
	} {
		if _, err := eng.CreateQueue(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	sent, err := eng.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "loader_dlq",
		Entries: []tidemq.SendEntry{{ID: "1", Body: `{"Message": "{\"caseId\": 1001}"}`}}})
	if err != nil {
		t.Fatal(err)
	}
	id := sent[0].MessageID

	run := func(args ...string) (string, int) {
		t.Helper()
		cmd := newDLQCommand()
		var out, errw bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&errw)
		cmd.SetArgs(append(args, "--endpoint", srv.URL, "--wait", "0", "--progress=false"))
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		err := cmd.ExecuteContext(ctx)
		var ee *exitError
		switch {
		case err == nil:
			return out.String(), 0
		case errors.As(err, &ee):
			return out.String() + "error: " + err.Error(), ee.code
		}
		return out.String() + "error: " + err.Error(), 1
	}

	// The message was sent to the DLQ directly, and two queues feed it.
	out, code := run("redrive", "loader_dlq")
	if code != 2 || !strings.Contains(out, "not redriven, still in loader_dlq:\n  "+id+": it has no DeadLetterQueueSourceArn") ||
		!strings.Contains(out, "error: partial redrive: 1 message(s) were not redriven (see above)") {
		t.Errorf("redrive (exit %d):\n%s", code, out)
	}
	out, code = run("redrive", "loader_dlq", "--dry-run")
	if code != 2 || !strings.Contains(out, "would keep "+id+": it has no DeadLetterQueueSourceArn") ||
		!strings.Contains(out, "1 message(s) would not be redriven") {
		t.Errorf("redrive --dry-run (exit %d):\n%s", code, out)
	}
	out, code = run("redrive", "loader_dlq", "--to", "loader")
	if code != 0 {
		t.Errorf("redrive --to (exit %d):\n%s", code, out)
	}
	if out, code = run("redrive", "nowhere_dlq"); code != 1 || !strings.Contains(out, "queue nowhere_dlq does not exist") {
		t.Errorf("redrive of a missing queue (exit %d):\n%s", code, out)
	}
	out, _ = run("redrive", "--help")
	if !strings.Contains(out, "Exit status:") || !strings.Contains(out, "2  partial") {
		t.Errorf("redrive --help lacks the exit status:\n%s", out)
	}
}
