package metrics

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
)

// Scrapes that arrive while one is computed wait for it and get its
// bytes: the snapshots are taken once for all of them. The next scrape
// computes afresh.
func TestConcurrentScrapesShareOne(t *testing.T) {
	var calls atomic.Int32
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	m := New(Options{NoRuntime: true, Snapshots: func() []tidemq.QueueSnapshot {
		n := calls.Add(1)
		if n == 1 {
			entered <- struct{}{}
			<-release
		}
		return []tidemq.QueueSnapshot{{Name: "q", Visible: int(n)}}
	}})
	h := m.Handler()
	const n = 10
	bodies := make([]string, n)
	var wg sync.WaitGroup
	get := func(i int, gz bool) {
		defer wg.Done()
		req := httptest.NewRequest("GET", "/metrics", nil)
		if gz {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var r io.Reader = rec.Body
		if rec.Header().Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(rec.Body)
			if err != nil {
				t.Error(err)
				return
			}
			r = zr
		}
		b, _ := io.ReadAll(r)
		bodies[i] = string(b)
	}
	wg.Add(1)
	go get(0, false)
	<-entered
	for i := 1; i < n; i++ {
		wg.Add(1)
		go get(i, i%2 == 0)
	}
	deadline := time.Now().Add(10 * time.Second)
	for m.scrapes.waiting.Load() != n-1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d scrapes waiting, want %d", m.scrapes.waiting.Load(), n-1)
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if c := calls.Load(); c != 1 {
		t.Errorf("%d concurrent scrapes took %d snapshots, want 1", n, c)
	}
	for i, b := range bodies {
		if !strings.Contains(b, `tidemq_messages_visible{queue="q"} 1`) || b != bodies[0] {
			t.Errorf("scrape %d differs from the first:\n%s", i, b)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if !strings.Contains(rec.Body.String(), `tidemq_messages_visible{queue="q"} 2`) || calls.Load() != 2 {
		t.Errorf("the scrape after the shared one was not computed afresh (%d snapshots):\n%s", calls.Load(), rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q", ct)
	}
}

// A scrape that waits gives up when its client goes away.
func TestWaitingScrapeCancelled(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	m := New(Options{NoRuntime: true, Snapshots: func() []tidemq.QueueSnapshot {
		close(entered)
		<-release
		return nil
	}})
	go m.Handler().ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/metrics", nil))
	<-entered
	cancel := make(chan struct{})
	close(cancel)
	if r := m.scrape(cancel); r != nil {
		t.Errorf("a cancelled waiter got a result")
	}
	close(release)
}

func TestAcceptsGzip(t *testing.T) {
	for h, want := range map[string]bool{"gzip": true, "deflate, gzip;q=1.0, *;q=0.5": true, "gzip;q=0": false,
		"gzip; q=0.000": false, "gzip;q=0.5": true, "": false, "identity": false, "GZIP": true} {
		if got := acceptsGzip(h); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", h, got, want)
		}
	}
}

// manyQueues is n empty queues named q000000..., with one deep queue and
// one firing alarm on a shallow queue at the end.
func manyQueues(n int) ([]tidemq.QueueSnapshot, []AlarmState) {
	snaps := make([]tidemq.QueueSnapshot, n)
	for i := range snaps {
		snaps[i] = tidemq.QueueSnapshot{Name: fmt.Sprintf("q%06d", i), RetentionSeconds: 345600,
			Stats: tidemq.QueueStats{Sent: 1, Received: 1, Deleted: 1}}
	}
	snaps[n-2].Visible, snaps[n-2].InFlight = 7, 2
	snaps[n-3].IsDeadLetterQueue, snaps[n-3].Visible = true, 1
	alarms := []AlarmState{
		{Alarm: "consumer_gone", Queue: snaps[0].Name},
		{Alarm: "consumer_gone", Queue: snaps[n-1].Name, Firing: true},
		{Alarm: "consumer_gone", Queue: snaps[n-4].Name},
	}
	return snaps, alarms
}

// Past the cap, per-queue series are kept for the deepest queues (and the
// first by name), firing alarms are kept for all, and the totals count
// every queue.
func TestQueueSeriesCapped(t *testing.T) {
	snaps, alarms := manyQueues(2000)
	every := New(Options{NoRuntime: true, Snapshots: func() []tidemq.QueueSnapshot { return snaps },
		Alarms: func() []AlarmState { return alarms }})
	// With AlarmsFor, a capped scrape asks only for the alarms of the
	// queues it shows (and the firing ones, and one of each name).
	var asked []string
	shown := New(Options{NoRuntime: true, Snapshots: func() []tidemq.QueueSnapshot { return snaps },
		Alarms: func() []AlarmState { panic("every alarm asked for") },
		AlarmsFor: func(queues []string) []AlarmState {
			asked = queues
			named := map[string]bool{}
			for _, q := range queues {
				named[q] = true
			}
			var out []AlarmState
			for i, a := range alarms {
				if a.Firing || named[a.Queue] || i == 0 {
					out = append(out, a)
				}
			}
			return out
		}})
	for _, m := range []*Metrics{every, shown} {
		checkCapped(t, m)
	}
	if len(asked) != DefaultQueueSeries {
		t.Errorf("AlarmsFor asked for %d queues, want the %d shown", len(asked), DefaultQueueSeries)
	}
	none := New(Options{NoRuntime: true, QueueSeries: NoQueueSeries, Snapshots: func() []tidemq.QueueSnapshot { return snaps }})
	rec := httptest.NewRecorder()
	none.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if strings.Contains(rec.Body.String(), "tidemq_messages_visible{") || !strings.Contains(rec.Body.String(), "tidemq_metrics_queues_omitted 2000") {
		t.Errorf("NoQueueSeries scrape has per-queue series or no omitted count")
	}
	all := New(Options{NoRuntime: true, QueueSeries: AllQueueSeries, Snapshots: func() []tidemq.QueueSnapshot { return snaps }})
	rec = httptest.NewRecorder()
	all.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if n := strings.Count(rec.Body.String(), "tidemq_messages_visible{"); n != 2000 {
		t.Errorf("AllQueueSeries: %d queues with series, want 2000", n)
	}
}

func checkCapped(t *testing.T, m *Metrics) {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	if n := strings.Count(body, "tidemq_messages_visible{"); n != DefaultQueueSeries {
		t.Errorf("%d queues with per-queue series, want %d", n, DefaultQueueSeries)
	}
	for _, want := range []string{
		`tidemq_messages_visible{queue="q001998"} 7`, // the deepest
		`tidemq_messages_visible{queue="q001997"} 1`,
		`tidemq_messages_visible{queue="q000000"} 0`, // then by name
		"tidemq_queues 2000\n",
		"tidemq_metrics_queues_omitted 1500\n",
		"tidemq_queues_messages_visible 8\n",
		"tidemq_queues_messages_not_visible 2\n",
		"tidemq_dead_letter_queues 1\n",
		"tidemq_dead_letter_queues_messages_visible 1\n",
		"tidemq_queues_messages_sent_total 2000\n",
		`tidemq_alarm_firing{alarm="consumer_gone",queue="q001999"} 1`, // firing, omitted queue
		`tidemq_alarm_firing{alarm="consumer_gone",queue="q000000"} 0`,
		`tidemq_alarms_firing{alarm="consumer_gone"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	if strings.Contains(body, `queue="q001996"`) {
		t.Errorf("an OK alarm of an omitted queue is in the scrape")
	}
	if strings.Contains(body, `tidemq_messages_visible{queue="q000500"}`) {
		t.Errorf("queue 500 has series past the cap")
	}
}

// The message size histogram keeps its own series for QueueSeries queues;
// the others share queue="".
func TestMessageSizeSeriesCapped(t *testing.T) {
	m := New(Options{NoRuntime: true, QueueSeries: 2})
	for _, q := range []string{"a", "b", "c", "a", "d"} {
		m.ObserveMessageSize(q, 100)
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{`tidemq_message_size_bytes_count{queue="a"} 2`, `tidemq_message_size_bytes_count{queue="b"} 1`,
		`tidemq_message_size_bytes_count{queue=""} 2`} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, `queue="c"`) {
		t.Errorf("queue c has its own size series past the cap")
	}
}
