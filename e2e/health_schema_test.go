package e2e

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq/internal/pgtest"
)

// Issue 26: the schema of a running node dropped and created again (as a
// dropped and re-created database leaves it). /health may answer 503, or
// 200 once the node serves again; never 200 while calls fail with
// `relation "queues" does not exist`. The node re-runs its migrations at
// its next probe, so it serves again by itself.
func TestServePostgresSchemaDroppedUnderANode(t *testing.T) {
	t.Parallel()
	dsn, schema := pgtest.Isolated(t)
	s := startServer(t, "--store", dsn, "--data-dir", filepath.Join(t.TempDir(), "a"))
	q := s.createQueue(t, "before", nil)
	s.send(t, q, "lost with the schema")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	id := pgx.Identifier{schema}.Sanitize()
	if _, err := conn.Exec(ctx, "DROP SCHEMA "+id+" CASCADE; CREATE SCHEMA "+id); err != nil {
		t.Fatal(err)
	}

	probe := func() (int, string) {
		resp, err := httpClient.Get(s.url + "/health")
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, body := probe()
		if code == http.StatusServiceUnavailable && strings.TrimSpace(body) != `{"status":"unavailable"}` {
			t.Errorf("an unsigned /health said more than its status: %s", body)
		}
		if code == http.StatusOK {
			status, out := s.call(t, "CreateQueue", map[string]any{"QueueName": "after"})
			if status != http.StatusOK {
				t.Fatalf("/health answered 200 while CreateQueue fails: %d %v", status, out)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/health still %d %s 20 s after the schema was re-created", code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	after := str(s.mustCall(t, "GetQueueUrl", map[string]any{"QueueName": "after"}), "QueueUrl")
	s.send(t, after, "served again")
	if ms := s.receive(t, after, map[string]any{"WaitTimeSeconds": 2}); len(ms) != 1 || str(ms[0]["Body"]) != "served again" {
		t.Fatalf("after the schema came back, receive got %v", ms)
	}
	if status, _ := s.call(t, "GetQueueUrl", map[string]any{"QueueName": "before"}); status == http.StatusOK {
		t.Error("the queue of the dropped schema is still there")
	}
	if !strings.Contains(s.logs.String(), "creating them again") {
		t.Errorf("the node did not log that its tables were gone:\n%s", s.logs)
	}
}
