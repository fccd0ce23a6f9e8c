package tidemq

import (
	"encoding/json"
	"testing"
)

// listedWireGolden is one queue of a ListQueueStats answer as every
// server version so far writes it (the keys and their order are the wire
// tidemq dlq of any version reads).
const listedWireGolden = `{"QueueUrl":"http://localhost:9324/000000000000/jobs","QueueArn":"arn:aws:sqs:us-east-1:000000000000:jobs",` +
	`"Fifo":false,"Visible":3,"InFlight":1,"Delayed":2,"OldestAgeSeconds":42.5,"RetentionSeconds":345600,` +
	`"DeadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:jobs-dlq","MaxReceiveCount":3,"IsDeadLetterQueue":false}`

func jobsSnapshot() QueueSnapshot {
	return QueueSnapshot{
		Name: "jobs", ARN: "arn:aws:sqs:us-east-1:000000000000:jobs", Visible: 3, InFlight: 1, Delayed: 2,
		OldestAgeSeconds: 42.5, RetentionSeconds: 345600,
		DeadLetterTarget: "arn:aws:sqs:us-east-1:000000000000:jobs-dlq", MaxReceiveCount: 3,
	}
}

// TestListedQueueWire: the one snapshot type, listed, writes
// ListQueueStats' wire byte for byte, without the fields that wire never
// had (counters, last receive, bytes).
func TestListedQueueWire(t *testing.T) {
	s := jobsSnapshot()
	s.Stats.Sent, s.LastReceiveUnixMilli, s.Bytes = 9, 1700000000000, 100
	b, err := json.Marshal(s.Listed("http://localhost:9324/000000000000/jobs"))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != listedWireGolden {
		t.Errorf("listed as\n%s\nwant\n%s", b, listedWireGolden)
	}
	// In a list, as the extension answers.
	b, _ = json.Marshal(struct{ Queues []ListedQueue }{[]ListedQueue{s.Listed("http://localhost:9324/000000000000/jobs")}})
	if want := `{"Queues":[` + listedWireGolden + `]}`; string(b) != want {
		t.Errorf("in a list:\n%s\nwant\n%s", b, want)
	}
}

// TestListedQueueReadsOlderServers: an answer of an older server (the
// golden wire) reads back into the snapshot; without OldestAgeSeconds the
// age is unknown, not zero, and the empty optional keys stay empty.
func TestListedQueueReadsOlderServers(t *testing.T) {
	var l ListedQueue
	if err := json.Unmarshal([]byte(listedWireGolden), &l); err != nil {
		t.Fatal(err)
	}
	if want := jobsSnapshot(); l.QueueSnapshot != want || !l.AgeKnown || l.URL != "http://localhost:9324/000000000000/jobs" {
		t.Errorf("read %+v\nwant %+v", l, want)
	}
	var out struct{ Queues []ListedQueue }
	in := `{"Queues":[{"QueueUrl":"http://h/1/jobs-dlq","QueueArn":"arn:aws:sqs:us-east-1:1:jobs-dlq","Fifo":true,"Visible":1,` +
		`"InFlight":0,"Delayed":0,"RetentionSeconds":60,"IsDeadLetterQueue":true}]}`
	if err := json.Unmarshal([]byte(in), &out); err != nil {
		t.Fatal(err)
	}
	got := out.Queues[0]
	if got.AgeKnown || got.Name != "jobs-dlq" || !got.FIFO || !got.IsDeadLetterQueue || got.DeadLetterTarget != "" || got.Visible != 1 {
		t.Errorf("read %+v", got)
	}
	b, _ := json.Marshal(got)
	if string(b) != in[len(`{"Queues":[`):len(in)-2] {
		t.Errorf("round trip without an age:\n%s\nwant\n%s", b, in[len(`{"Queues":[`):len(in)-2])
	}
}

// TestSnapshotOfAttributes: what top and dlq make of GetQueueAttributes,
// maxReceiveCount as a number or a string (the AWS console writes one).
func TestSnapshotOfAttributes(t *testing.T) {
	for _, count := range []string{`3`, `"3"`} {
		got := SnapshotOfAttributes("http://localhost:9324/000000000000/jobs", map[string]string{
			"QueueArn": "arn:aws:sqs:us-east-1:000000000000:jobs", "ApproximateNumberOfMessages": "3",
			"ApproximateNumberOfMessagesNotVisible": "1", "ApproximateNumberOfMessagesDelayed": "2",
			"MessageRetentionPeriod": "345600",
			"RedrivePolicy":          `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:jobs-dlq","maxReceiveCount":` + count + `}`,
		})
		want := jobsSnapshot()
		want.OldestAgeSeconds = 0
		if got != want {
			t.Errorf("maxReceiveCount %s: %+v\nwant %+v", count, got, want)
		}
	}
}
