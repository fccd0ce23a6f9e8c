package console

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/dlq"
)

// seed002 reads seed 002's message before and after its own Python
// redrive (dlq/testdata: written by json.dumps, as the seed's
// redrive_dlq_messages writes them).
func seed002(t *testing.T) (in, out string) {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "dlq", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	return read("seed002-in.json"), read("seed002-out.json")
}

// seed002Edits are the body markers seed 002's redrive sets.
var seed002Edits = []string{
	"inner.dlq_redriven=true",
	"inner.eventDetail.retry_count=0",
	"inner.eventDetail.dlq_redrive_count+=1",
	"inner.eventDetail.dlq_final_pass=false",
}

type jobAnswer struct {
	ID, Status, Source, Destination, Options, Error, Output string
	Moved                                                   int
	NotRedriven                                             []dlq.NotRedriven
}

// waitJob waits for the newest redrive job of queue to end and returns it.
func (f *fixture) waitJob(queue string) jobAnswer {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var got struct {
			Redrives []jobAnswer
		}
		f.get("/console/api/movetasks?queue="+queue, http.StatusOK, &got)
		if len(got.Redrives) == 0 {
			f.t.Fatalf("no redrive job of %s", queue)
		}
		if j := got.Redrives[0]; j.Status != tidemq.MoveTaskRunning {
			return j
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("the redrive job of %s still runs", queue)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func redriveBody(t *testing.T, v map[string]any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRedriveWithBodyMarkers: the console's marked redrive is `tidemq dlq
// redrive --mark --body-set ...`: a dead-lettered message and one sent to
// the DLQ directly (no source: it goes to the DLQ's only source) arrive in
// the source queue with the body markers set byte for byte as seed 002's
// Python sets them, and with the marker attributes; a body that is not JSON
// stays in the DLQ and is named with the reason.
func TestRedriveWithBodyMarkers(t *testing.T) {
	f := newFixture(t)
	in, want := seed002(t)
	f.deadLetterSetup(in)
	f.send("orders-dlq", in, nil) // send_to_dlq: no DeadLetterQueueSourceArn
	f.send("orders-dlq", "not json", nil)

	var e apiError
	f.post("/console/api/redrive", redriveBody(t, map[string]any{"queue": "orders-dlq", "bodySet": []string{"inner.n=+1"}}), http.StatusBadRequest, &e)
	if !strings.Contains(e.Error, "+=1") {
		t.Errorf("a mistyped body marker: %+v", e)
	}
	var started struct{ Redrive, TaskHandle string }
	f.post("/console/api/redrive", redriveBody(t, map[string]any{"queue": "orders-dlq", "mark": true, "bodySet": seed002Edits}), http.StatusOK, &started)
	if started.Redrive == "" || started.TaskHandle != "" {
		t.Fatalf("a marked redrive answered %+v, want a redrive job", started)
	}
	j := f.waitJob("orders-dlq")
	if j.Status != tidemq.MoveTaskCompleted || j.Moved != 2 || len(j.NotRedriven) != 1 || !strings.Contains(j.NotRedriven[0].Reason, "not JSON") {
		t.Fatalf("job %+v", j)
	}
	if !strings.Contains(j.Options, "--mark") || !strings.Contains(j.Options, "--body-set inner.eventDetail.dlq_redrive_count+=1") {
		t.Errorf("job options %q", j.Options)
	}
	if !strings.Contains(j.Output, "moved 2") {
		t.Errorf("job output %q", j.Output)
	}
	got := f.receive("orders", 30)
	if len(got) != 2 {
		t.Fatalf("the source queue gave %d messages, want 2", len(got))
	}
	for _, m := range got {
		if m.Body != want {
			t.Errorf("redriven body\n got %s\nwant %s", m.Body, want)
		}
		if a := m.Attributes[dlq.MarkRedriven]; a.StringValue != "true" {
			t.Errorf("%s = %+v", dlq.MarkRedriven, a)
		}
		if a := m.Attributes[dlq.MarkRedriveCount]; a.StringValue != "1" || a.DataType != "Number" {
			t.Errorf("%s = %+v", dlq.MarkRedriveCount, a)
		}
	}
	var left struct{ Messages []messageView }
	f.get("/console/api/messages?queue=orders-dlq", http.StatusOK, &left)
	if len(left.Messages) != 1 || left.Messages[0].Body != "not json" {
		t.Errorf("the DLQ holds %+v, want the message that is not JSON", left.Messages)
	}
}

// TestRedriveOrphanedDLQToAChosenQueue: a dead-letter queue that no
// RedrivePolicy names any more (its source was deleted) cannot be redriven
// by a move task; the console asks for a destination and moves its
// messages there message by message. A queue that is not a DLQ is refused.
func TestRedriveOrphanedDLQToAChosenQueue(t *testing.T) {
	f := newFixture(t)
	f.deadLetterSetup(`{"n":1}`)
	if err := f.eng.DeleteQueue(t.Context(), tidemq.DeleteQueueParams{Queue: "orders"}); err != nil {
		t.Fatal(err)
	}
	f.send("orders-dlq", `{"n":2}`, nil) // sent directly
	f.createQueue("orders-v2", nil)
	f.createQueue("scratch", nil)

	var e apiError
	f.post("/console/api/redrive", `{"queue":"orders-dlq"}`, http.StatusBadRequest, &e)
	if !strings.Contains(e.Error, "choose a destination") {
		t.Errorf("an orphaned DLQ without a destination: %+v", e)
	}
	f.post("/console/api/redrive", `{"queue":"scratch","destination":"orders-v2"}`, http.StatusBadRequest, &e)
	if !strings.Contains(e.Error, "scratch is not a dead-letter queue") {
		t.Errorf("a queue that is not a DLQ: %+v", e)
	}
	f.post("/console/api/redrive", `{"queue":"orders-dlq","destination":"orders-dlq"}`, http.StatusBadRequest, &e)
	f.post("/console/api/redrive", `{"queue":"orders-dlq","destination":"nosuch"}`, http.StatusBadRequest, &e)

	var started struct{ Redrive string }
	f.post("/console/api/redrive", `{"queue":"orders-dlq","destination":"orders-v2"}`, http.StatusOK, &started)
	if started.Redrive == "" {
		t.Fatalf("answer %+v, want a redrive job", started)
	}
	if j := f.waitJob("orders-dlq"); j.Status != tidemq.MoveTaskCompleted || j.Moved != 2 || j.Destination != "orders-v2" {
		t.Fatalf("job %+v", j)
	}
	got := f.receive("orders-v2", 30)
	bodies := map[string]bool{}
	for _, m := range got {
		bodies[m.Body] = true
		if m.SenderID != AccessKey {
			t.Errorf("SenderId %q, want the console's %q", m.SenderID, AccessKey)
		}
	}
	if len(got) != 2 || !bodies[`{"n":1}`] || !bodies[`{"n":2}`] {
		t.Errorf("orders-v2 holds %d messages %v", len(got), bodies)
	}
}

// TestCloseEndsRedriveJobs: a server shutting down closes the console
// before the broker; Close ends a running redrive job between two
// messages and waits for it, and every message is then in exactly one of
// the two queues (none lost, none in both).
func TestCloseEndsRedriveJobs(t *testing.T) {
	f := newFixture(t)
	in, _ := seed002(t)
	f.deadLetterSetup(in)
	const direct = 40
	for i := 0; i < direct; i++ {
		f.send("orders-dlq", in, nil)
	}
	var started struct{ Redrive string }
	f.post("/console/api/redrive", redriveBody(t, map[string]any{"queue": "orders-dlq", "mark": true}), http.StatusOK, &started)
	if started.Redrive == "" {
		t.Fatalf("no redrive job: %+v", started)
	}
	done := make(chan struct{})
	go func() { f.con.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Close did not end the redrive job")
	}
	var got struct{ Redrives []jobAnswer }
	f.get("/console/api/movetasks?queue=orders-dlq", http.StatusOK, &got)
	if len(got.Redrives) != 1 || got.Redrives[0].Status == tidemq.MoveTaskRunning {
		t.Fatalf("after Close the job is %+v", got.Redrives)
	}
	total := 0
	for _, s := range f.eng.Snapshot() {
		total += s.Visible + s.InFlight + s.Delayed
	}
	if total != direct+1 {
		t.Fatalf("after Close the queues hold %d messages, want %d (moved %d)", total, direct+1, got.Redrives[0].Moved)
	}
}
