package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidemq/tidemq/internal/pgtest"
)

// leaderLog is what a node logs when it starts the leader's jobs.
const leaderLog = "this node now runs the triggers"

// fencedLog is what a node logs when PostgreSQL refuses one of its
// leader's writes for a stale fencing token (postgres/broker.go).
const fencedLog = "a leader's write refused"

// A leader frozen (SIGSTOP) in the middle of a trigger invocation, past
// its lease, while the other node takes over and runs the trigger, then
// resumed (SIGCONT): the invocation it was waiting on answers, and its
// delete of the message, made with its old token, is refused by
// PostgreSQL (the message stays in flight, to come back after its
// visibility timeout: at least once, never acted on by two leaders). With
// a cancellation-only lease the delete went through.
func TestServePostgresFencesAFrozenLeader(t *testing.T) {
	t.Parallel()
	dsn, _ := pgtest.Isolated(t)
	dir := t.TempDir()

	holding := make(chan struct{})  // the frozen leader's invocation arrived
	release := make(chan struct{})  // answer it
	calls := make(chan string, 100) // every invocation's first body
	fn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev struct{ Records []struct{ Body string } }
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &ev)
		for _, rec := range ev.Records {
			calls <- rec.Body
			if rec.Body == "held" {
				close(holding)
				<-release
			}
		}
		w.Write([]byte(`{"batchItemFailures":[]}`))
	}))
	t.Cleanup(fn.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})

	flags := func(name string) []string {
		return []string{"--store", dsn, "--data-dir", filepath.Join(dir, name), "--no-alarms", "--lease-ttl", "3s", "--cluster-reload", "300ms"}
	}
	a := startServer(t, flags("a")...)
	eventuallyE2E(t, "A leads", func() bool { return strings.Contains(a.logs.String(), leaderLog) })
	b := startServer(t, flags("b")...)

	jobs := a.createQueue(t, "jobs", map[string]string{"VisibilityTimeout": "60"})
	a.adminJSON(t, http.MethodPost, "/tidemq/triggers", `{"Name":"jobs-fn","Queue":"jobs","Timeout":30,"BatchSize":1,
		"Target":{"URL":"`+fn.URL+`/jobs"}}`, http.StatusCreated)
	a.send(t, jobs, "held")
	select {
	case <-holding:
	case <-time.After(15 * time.Second):
		t.Fatal("the leader did not invoke the trigger")
	}
	if strings.Contains(b.logs.String(), leaderLog) {
		t.Fatal("B leads while A holds the lease")
	}

	// A freezes mid-invocation; B takes over once A's lease has passed.
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	frozen := time.Now()
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = a.cmd.Process.Signal(syscall.SIGCONT)
		}
	}
	t.Cleanup(resume)
	eventuallyE2E(t, "B takes the lease over", func() bool { return strings.Contains(b.logs.String(), leaderLog) })
	t.Logf("B took over %v after A froze (--lease-ttl 3s)", time.Since(frozen).Round(time.Millisecond))
	b.send(t, jobs, "after")
	for body := range calls {
		if body == "after" {
			break
		}
	}

	// A resumes: the invocation it waited on answers, it deletes.
	close(release)
	resume()
	eventuallyE2E(t, "PostgreSQL refuses A's stale write", func() bool { return strings.Contains(a.logs.String(), fencedLog) })
	logs := a.logs.String()
	line := logs[strings.Index(logs, fencedLog):]
	line = line[:strings.IndexByte(line+"\n", '\n')]
	t.Logf("A: %s", line)
	if !strings.Contains(line, "stale fencing token") {
		t.Errorf("the refusal does not name the stale token: %s", line)
	}
	eventuallyE2E(t, "A stops leading", func() bool { return strings.Contains(a.logs.String(), "lease lost") })

	// The held message was not deleted by A: in flight, until its
	// visibility timeout brings it back (to B).
	if got := b.queueAttrs(t, jobs, "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessages"); got["ApproximateNumberOfMessagesNotVisible"] != "1" {
		t.Errorf("queue after A's refused delete: %v; want the held message still in flight", got)
	}
	select {
	case body := <-calls:
		t.Errorf("an invocation after the takeover besides B's: %q", body)
	default:
	}
}
