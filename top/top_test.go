package top_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/alarms"
	"github.com/tidemq/tidemq/top"
)

var at = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

const arn = "arn:aws:sqs:us-east-1:000000000000:"

// frames are two fixed tidemq frames two seconds apart.
func frames() (top.Frame, top.Frame) {
	prev := top.Frame{At: at, Counters: true, Queues: []tidemq.QueueSnapshot{
		{Name: "orders", ARN: arn + "orders", DeadLetterTarget: arn + "orders-dlq", Stats: tidemq.QueueStats{Sent: 100, Deleted: 90}},
		{Name: "orders-dlq", ARN: arn + "orders-dlq", IsDeadLetterQueue: true},
		{Name: "payments.fifo", ARN: arn + "payments.fifo", FIFO: true, Stats: tidemq.QueueStats{Sent: 10}},
	}}
	cur := top.Frame{At: at.Add(2 * time.Second), Counters: true, Queues: []tidemq.QueueSnapshot{
		{Name: "orders", ARN: arn + "orders", DeadLetterTarget: arn + "orders-dlq", Visible: 40, InFlight: 7, Delayed: 3,
			OldestAgeSeconds: 754, Stats: tidemq.QueueStats{Sent: 124, Deleted: 97, DeadLettered: 2}},
		{Name: "orders-dlq", ARN: arn + "orders-dlq", IsDeadLetterQueue: true, Visible: 2, OldestAgeSeconds: 3 * 86400,
			Stats: tidemq.QueueStats{MovedIn: 2}},
		{Name: "payments.fifo", ARN: arn + "payments.fifo", FIFO: true, Visible: 1, OldestAgeSeconds: 5, Stats: tidemq.QueueStats{Sent: 11}},
	}, Alarms: []alarms.Alarm{
		{Alarm: alarms.DLQNotEmpty, Queue: "orders-dlq", State: alarms.StateFiring},
		{Alarm: alarms.Growth, Queue: "orders", State: alarms.StateFiring},
		{Alarm: alarms.ConsumerGone, Queue: "orders", State: alarms.StateFiring},
	}}
	return prev, cur
}

func TestRenderGolden(t *testing.T) {
	prev, cur := frames()
	rows := top.Rows(&prev, cur)
	view := top.View{Source: "tidemq http://127.0.0.1:9324", At: cur.At, Rows: rows, Sort: "depth"}
	want := `tidemq top — tidemq http://127.0.0.1:9324 — 12:00:02 — 3 queues — sort: depth
QUEUE            DEPTH  VISIBLE IN FLIGHT  DELAYED   OLDEST     IN/s    OUT/s    DLQ  ALARMS
orders              50       40         7        3   12m34s     12.0      4.5      2  growing,no-consumer
orders-dlq           2        2         0        0    3d00h      1.0      0.0  (dlq)  dlq
payments.fifo        1        1         0        0       5s      0.5      0.0      -

q quit  s sort  / filter
`
	if got := top.Render(view); got != want {
		t.Errorf("render:\n%s\nwant:\n%s", got, want)
	}
	// Printed once (top --once), the frame has no key hints.
	view.Static = true
	if got, want := top.Render(view), strings.TrimSuffix(want, "\nq quit  s sort  / filter\n"); got != want {
		t.Errorf("static render:\n%s\nwant:\n%s", got, want)
	}
	view.Static = false

	// Sorted by name, filtered, while typing the filter.
	view.Sort, view.Filter, view.Editing = "name", "ORD", true
	want = `tidemq top — tidemq http://127.0.0.1:9324 — 12:00:02 — 2 queues — sort: name — filter: ORD▏
QUEUE         DEPTH  VISIBLE IN FLIGHT  DELAYED   OLDEST     IN/s    OUT/s    DLQ  ALARMS
orders           50       40         7        3   12m34s     12.0      4.5      2  growing,no-consumer
orders-dlq        2        2         0        0    3d00h      1.0      0.0  (dlq)  dlq

type to filter  enter keep  esc clear
`
	if got := top.Render(view); got != want {
		t.Errorf("render:\n%s\nwant:\n%s", got, want)
	}

	// A first frame (no rates yet) from an SQS endpoint (no ages), cut to
	// a narrow terminal, with an error line.
	cur.Counters = false
	cur.Alarms = nil
	view = top.View{Source: "sqs aws", At: cur.At, Rows: top.Rows(nil, cur), Sort: "oldest", Width: 60, Err: errors.New("throttled")}
	want = `tidemq top — sqs aws — 12:00:02 — 3 queues — sort: oldest
error: throttled
QUEUE            DEPTH  VISIBLE IN FLIGHT  DELAYED   OLDEST
orders              50       40         7        3        -
orders-dlq           2        2         0        0        -
payments.fifo        1        1         0        0        -

q quit  s sort  / filter
`
	if got := top.Render(view); got != want {
		t.Errorf("render:\n%s\nwant:\n%s", got, want)
	}
}

// fixedSource returns the frames it is given, one per Fetch.
type fixedSource struct{ frames []top.Frame }

func (s *fixedSource) Name() string { return "fixed" }
func (s *fixedSource) Fetch(context.Context) (top.Frame, error) {
	f := s.frames[0]
	if len(s.frames) > 1 {
		s.frames = s.frames[1:]
	}
	return f, nil
}

func key(s string) tea.KeyMsg {
	switch s {
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

// TestModelKeys drives the model: two frames give rates; s cycles the
// sort; / types a filter; q quits.
func TestModelKeys(t *testing.T) {
	prev, cur := frames()
	var m tea.Model = top.New(&fixedSource{frames: []top.Frame{prev, cur}}, time.Second)
	step := func(msg tea.Msg) tea.Cmd {
		var cmd tea.Cmd
		m, cmd = m.Update(msg)
		return cmd
	}
	// Init fetches; the frame schedules a tick; the tick fetches again.
	if cmd := step(m.Init()()); cmd == nil {
		t.Fatal("no tick scheduled")
	}
	// The second frame, as the next fetch would bring it.
	fetch := top.New(&fixedSource{frames: []top.Frame{cur}}, time.Second).Init()
	step(fetch())
	if v := m.View(); !strings.Contains(v, "12.0") || !strings.Contains(v, "sort: name") {
		t.Fatalf("view:\n%s", v)
	}
	step(key("s"))
	if v := m.View(); !strings.Contains(v, "sort: depth") {
		t.Fatalf("after s:\n%s", v)
	}
	for _, k := range []string{"/", "f", "i", "f", "o", "enter"} {
		step(key(k))
	}
	if v := m.View(); !strings.Contains(v, "filter: fifo") || strings.Contains(v, "orders") || !strings.Contains(v, "payments.fifo") {
		t.Fatalf("after filter:\n%s", v)
	}
	step(key("/"))
	step(key("esc"))
	if v := m.View(); !strings.Contains(v, "orders-dlq") || strings.Contains(v, "filter:") {
		t.Fatalf("after esc:\n%s", v)
	}
	cmd := step(key("q"))
	if cmd == nil {
		t.Fatal("q: no command")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("q does not quit")
	}
}

// fakeSQS answers ListQueues (two pages) and GetQueueAttributes.
type fakeSQS struct{ attrs map[string]map[string]string }

func (f *fakeSQS) ListQueues(_ context.Context, in *sqs.ListQueuesInput, _ ...func(*sqs.Options)) (*sqs.ListQueuesOutput, error) {
	if in.NextToken == nil {
		next := "p2"
		return &sqs.ListQueuesOutput{QueueUrls: []string{"https://sqs.us-east-1.amazonaws.com/1/orders"}, NextToken: &next}, nil
	}
	return &sqs.ListQueuesOutput{QueueUrls: []string{"https://sqs.us-east-1.amazonaws.com/1/orders-dlq", "https://sqs.us-east-1.amazonaws.com/1/gone",
		"https://sqs.us-east-1.amazonaws.com/1/batch-7-dlq"}}, nil
}

func (f *fakeSQS) GetQueueAttributes(_ context.Context, in *sqs.GetQueueAttributesInput, _ ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error) {
	a, ok := f.attrs[*in.QueueUrl]
	if !ok {
		return nil, errors.New("AWS.SimpleQueueService.NonExistentQueue")
	}
	return &sqs.GetQueueAttributesOutput{Attributes: a}, nil
}

func TestSQSSource(t *testing.T) {
	f := &fakeSQS{attrs: map[string]map[string]string{
		"https://sqs.us-east-1.amazonaws.com/1/orders": {"QueueArn": "arn:aws:sqs:us-east-1:1:orders",
			"ApproximateNumberOfMessages": "40", "ApproximateNumberOfMessagesNotVisible": "7", "ApproximateNumberOfMessagesDelayed": "3",
			"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:1:orders-dlq","maxReceiveCount":5}`},
		"https://sqs.us-east-1.amazonaws.com/1/orders-dlq": {"QueueArn": "arn:aws:sqs:us-east-1:1:orders-dlq", "ApproximateNumberOfMessages": "2"},
		// Its source queue was deleted: only its name says what it is.
		"https://sqs.us-east-1.amazonaws.com/1/batch-7-dlq": {"QueueArn": "arn:aws:sqs:us-east-1:1:batch-7-dlq", "ApproximateNumberOfMessages": "4"},
	}}
	src := &top.SQSSource{Client: f, Label: "aws", Now: func() time.Time { return at }}
	fr, err := src.Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := top.Render(top.View{Source: src.Name(), At: fr.At, Rows: top.Rows(nil, fr), Sort: "name"})
	want := `tidemq top — sqs aws — 12:00:00 — 3 queues — sort: name
QUEUE          DEPTH  VISIBLE IN FLIGHT  DELAYED   OLDEST     IN/s    OUT/s    DLQ  ALARMS
batch-7-dlq        4        4         0        0        -        -        -  (dlq)
orders            50       40         7        3        -        -        -      2
orders-dlq         2        2         0        0        -        -        -  (dlq)

q quit  s sort  / filter
`
	if got != want {
		t.Errorf("render:\n%s\nwant:\n%s", got, want)
	}
}

func TestTidemqSource(t *testing.T) {
	_, cur := frames()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/tidemq/queues":
			json.NewEncoder(w).Encode(map[string]any{"queues": cur.Queues})
		case "/tidemq/alarms":
			json.NewEncoder(w).Encode(alarms.List{Alarms: append(cur.Alarms, alarms.Alarm{Alarm: alarms.OldestAge, Queue: "orders", State: alarms.StateOK})})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	src := &top.TidemqSource{Endpoint: srv.URL}
	if !src.Probe(context.Background()) {
		t.Fatal("probe failed")
	}
	fr, err := src.Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !fr.Counters || len(fr.Queues) != 3 || fr.Queues[0].Stats.Sent != 124 || len(fr.Alarms) != 3 {
		t.Errorf("frame %+v", fr)
	}
	if (&top.TidemqSource{Endpoint: srv.URL + "/nothing"}).Probe(context.Background()) {
		t.Error("probe of a non-tidemq endpoint succeeded")
	}
}

// TestKeysTogether checks keys that arrive in one read ("/ord").
func TestKeysTogether(t *testing.T) {
	_, cur := frames()
	var m tea.Model = top.New(&fixedSource{frames: []top.Frame{cur}}, time.Second)
	m, _ = m.Update(m.Init()())
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("s/pay")})
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if v := m.View(); !strings.Contains(v, "sort: depth — filter: pay\n") || strings.Contains(v, "orders") {
		t.Fatalf("view:\n%s", v)
	}
}

// TestTidemqSourcePages checks that top reads every page of
// GET /tidemq/queues.
func TestTidemqSourcePages(t *testing.T) {
	_, cur := frames()
	pages := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/tidemq/queues" {
			http.NotFound(w, r)
			return
		}
		pages++
		page, next, err := tidemq.PageSnapshots(cur.Queues, 1, r.URL.Query().Get("nextToken"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"queues": page, "nextToken": next})
	}))
	defer srv.Close()
	fr, err := (&top.TidemqSource{Endpoint: srv.URL}).Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(fr.Queues) != 3 || pages != 3 {
		t.Errorf("%d queues in %d pages, want 3 in 3", len(fr.Queues), pages)
	}
}
