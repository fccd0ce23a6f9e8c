package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/tidemq/tidemq"
)

// runStderr is run that also returns what the command wrote on stderr.
func runStderr(cmd *cobra.Command, args ...string) (string, string, error) {
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// warnOnly lints with one warning (no DLQ) and one note (a 3-minute FIFO
// stall), and no error.
const warnOnly = `queues:
  - name: solo
  - name: jobs.fifo
    fifo: true
    visibilityTimeout: 180
    redrivePolicy: {deadLetterQueue: jobs-dlq.fifo, maxReceiveCount: 1}
  - name: jobs-dlq.fifo
    fifo: true
    messageRetentionPeriod: 1209600
alarms:
  - {name: jobs-dlq, queue: jobs-dlq.fifo, metric: ApproximateNumberOfMessagesVisible, threshold: 0}
`

// TestApplyLintsFirst: 'tidemq apply' on the seed template, whose
// enrichment queue nobody reads (an error finding), prints the findings
// and fails before it creates anything — the server has no queue — in a
// dry run too; warnings alone are printed and do not stop it.
func TestApplyLintsFirst(t *testing.T) {
	s := newTestServer(t)
	ctx := context.Background()
	for _, extra := range [][]string{nil, {"--dry-run"}} {
		out, stderr, err := runStderr(newApplyCommand(), append([]string{seedTemplate, "--endpoint", s.url}, extra...)...)
		if err == nil || !strings.Contains(err.Error(), "lint found 1 error(s), so nothing was applied") || !strings.Contains(err.Error(), "--no-lint") {
			t.Fatalf("%v: err = %v", extra, err)
		}
		if !strings.Contains(stderr, "seed000-morpheus.yaml:45: error TQ005 (unconsumed-queue) EnrichmentPipelineQueue: ") ||
			!strings.Contains(stderr, "warning TQ006 (dlq-alarm) CrmSyncDLQ: ") || strings.Contains(stderr, "info TQ008") {
			t.Errorf("%v: stderr:\n%s", extra, stderr)
		}
		if out != "" {
			t.Errorf("%v: a plan was printed:\n%s", extra, out)
		}
		qs, err := s.eng.ListQueues(ctx, tidemq.ListQueuesParams{})
		if err != nil || len(qs.Names) != 0 {
			t.Fatalf("%v: queues after a failed lint: %v %v", extra, qs, err)
		}
		if ts := s.triggers.List(); len(ts) != 0 {
			t.Fatalf("%v: triggers after a failed lint: %v", extra, ts)
		}
	}

	file := filepath.Join(t.TempDir(), "tidemq.yaml")
	if err := os.WriteFile(file, []byte(warnOnly), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := runStderr(newApplyCommand(), file, "--endpoint", s.url)
	if err != nil || !strings.Contains(out, "3 to create") {
		t.Fatalf("warnings only: %v\n%s\n%s", err, out, stderr)
	}
	if !strings.Contains(stderr, "tidemq.yaml:2: warning TQ007 (missing-dlq) queues[solo]: ") || !strings.Contains(stderr, "lint: 1 warnings, 1 notes") {
		t.Errorf("warnings only: stderr:\n%s", stderr)
	}
}

// TestServeLintsConfigFirst: 'tidemq serve --config' with a file that has
// an error finding fails before it opens (or creates) the data directory,
// naming the finding; with --no-lint it gets past the lint.
func TestServeLintsConfigFirst(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	// An address that cannot be listened on: a server that got past the
	// lint stops there rather than serving.
	base := []string{"--data-dir", dataDir, "--listen", "256.0.0.1:0", "--no-alarms", "--log-level", "warn", "--config", seedTemplate}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w // the server logs to os.Stderr
	_, err = run(newServeCommand(), base...)
	os.Stderr = stderr
	w.Close()
	var logs bytes.Buffer
	logs.ReadFrom(r)
	if err == nil || !strings.Contains(err.Error(), "lint found 1 error(s), so nothing was applied") || !strings.Contains(err.Error(), "the server did not start") {
		t.Fatalf("err = %v", err)
	}
	if _, statErr := os.Stat(dataDir); !os.IsNotExist(statErr) {
		t.Errorf("the data directory was created (%v) although lint failed", statErr)
	}
	for _, want := range []string{`level=ERROR msg="config: lint error"`, "resource=EnrichmentPipelineQueue", "rule=\"TQ005 (unconsumed-queue)\"", "line=45",
		`level=WARN msg="config: lint warning"`, "resource=CrmSyncDLQ"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack %s:\n%s", want, logs.String())
		}
	}
	// --no-lint gets past the lint: the next failure is the listen address.
	_, err = run(newServeCommand(), append(base, "--log-level", "error", "--no-lint")...)
	if err == nil || strings.Contains(err.Error(), "lint") || !strings.Contains(err.Error(), "listen") {
		t.Errorf("--no-lint: err = %v", err)
	}
}

// TestLintSummary: apply's summary line sends the reader to 'tidemq lint'
// for the notes only when there are some ("0 notes ('tidemq lint t.yaml'
// shows the notes)" was printed).
func TestLintSummary(t *testing.T) {
	if got, want := lintSummary(1, 0, "t.yaml"), "lint: 1 warnings, 0 notes; applying"; got != want {
		t.Errorf("no notes: %q, want %q", got, want)
	}
	if got, want := lintSummary(0, 2, "t.yaml"), "lint: 0 warnings, 2 notes ('tidemq lint t.yaml' shows the notes); applying"; got != want {
		t.Errorf("notes: %q, want %q", got, want)
	}
}
