package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
)

type fixedSnapshots []tidemq.QueueSnapshot

func (f fixedSnapshots) Snapshot() []tidemq.QueueSnapshot { return f }

// queuesAnswer is what h answered to a GET /tidemq/queues: its status and
// body, and the page decoded from it (err: the body is no page).
type queuesAnswer struct {
	code      int
	body      string
	queues    []tidemq.QueueSnapshot
	nextToken string
	err       error
}

// getQueues serves r with h and decodes the page it answers.
func getQueues(h http.Handler, r *http.Request) queuesAnswer {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	var out struct {
		Queues    []tidemq.QueueSnapshot
		NextToken string
	}
	err := json.Unmarshal(rec.Body.Bytes(), &out)
	return queuesAnswer{code: rec.Code, body: rec.Body.String(), queues: out.Queues, nextToken: out.NextToken, err: err}
}

// names are the names of the page's queues.
func (a queuesAnswer) names() []string {
	var names []string
	for _, q := range a.queues {
		names = append(names, q.Name)
	}
	return names
}

// GET /tidemq/queues answers a page at a time, 1,000 queues by default.
func TestQueuesRoutePages(t *testing.T) {
	snaps := make(fixedSnapshots, 2500)
	for i := range snaps {
		snaps[i].Name = fmt.Sprintf("q%05d", i)
	}
	h := Queues(snaps)
	get := func(query string) (int, []tidemq.QueueSnapshot, string) {
		a := getQueues(h, httptest.NewRequest("GET", "/tidemq/queues"+query, nil))
		return a.code, a.queues, a.nextToken
	}
	code, qs, next := get("")
	if code != http.StatusOK || len(qs) != tidemq.SnapshotPageSize || next == "" {
		t.Fatalf("first page: %d, %d queues, next %q", code, len(qs), next)
	}
	total := len(qs)
	for next != "" {
		var page []tidemq.QueueSnapshot
		code, page, next = get("?limit=700&nextToken=" + url.QueryEscape(next))
		if code != http.StatusOK {
			t.Fatalf("status %d", code)
		}
		total += len(page)
	}
	if total != 2500 {
		t.Errorf("%d queues over the pages, want 2500", total)
	}
	for _, bad := range []string{"?limit=0", "?limit=10001", "?limit=x", "?nextToken=%25%25"} {
		if code, _, _ := get(bad); code != http.StatusBadRequest {
			t.Errorf("GET /tidemq/queues%s: %d, want 400", bad, code)
		}
	}
}

// TestQueuesRouteWire pins the JSON of GET /tidemq/queues (tidemq top and
// scripts read it): QueueSnapshot's keys are its field names, and errors
// are the admin shape {"error", "code"}.
func TestQueuesRouteWire(t *testing.T) {
	snaps := fixedSnapshots{{Name: "q", ARN: "arn:aws:sqs:us-east-1:000000000000:q", Visible: 3, InFlight: 1,
		OldestAgeSeconds: 2.5, RetentionSeconds: 60, LastReceiveUnixMilli: 7, Stats: tidemq.QueueStats{Sent: 4, Deleted: 1}}}
	rec := httptest.NewRecorder()
	Queues(snaps).ServeHTTP(rec, httptest.NewRequest("GET", "/tidemq/queues", nil))
	want := `{"queues":[{"Name":"q","ARN":"arn:aws:sqs:us-east-1:000000000000:q","FIFO":false,"Visible":3,"InFlight":1,"Delayed":0,` +
		`"OldestAgeSeconds":2.5,"RetentionSeconds":60,"DeadLetterTarget":"","MaxReceiveCount":0,"IsDeadLetterQueue":false,` +
		`"LastReceiveUnixMilli":7,"Stats":{"Sent":4,"Duplicates":0,"Received":0,"EmptyReceives":0,"Deleted":1,"Expired":0,` +
		`"DeadLettered":0,"Purged":0,"MovedOut":0,"MovedIn":0}}]}` + "\n"
	if got := rec.Body.String(); got != want {
		t.Errorf("GET /tidemq/queues:\n got %s\nwant %s", got, want)
	}
	rec = httptest.NewRecorder()
	Queues(snaps).ServeHTTP(rec, httptest.NewRequest("GET", "/tidemq/queues?limit=0", nil))
	if want := `{"error":"limit must be 1 to 10000","code":"InvalidParameterValue"}` + "\n"; rec.Code != 400 || rec.Body.String() != want {
		t.Errorf("limit=0: %d %s", rec.Code, rec.Body.String())
	}
}

// Under permissions GET /tidemq/queues lists only the queues the caller
// may see, a page at a time of those, deciding no more queues per page
// than the page needs.
func TestVisibleQueuesPages(t *testing.T) {
	snaps := make(fixedSnapshots, 2500)
	for i := range snaps {
		snaps[i].Name = fmt.Sprintf("q%05d", i)
		snaps[i].ARN = "arn:aws:sqs:us-east-1:000000000000:" + snaps[i].Name
	}
	decided := 0
	h := VisibleQueues(snaps, func(r *http.Request, arn string) bool {
		decided++
		var n int
		_, _ = fmt.Sscanf(arn[len("arn:aws:sqs:us-east-1:000000000000:q"):], "%d", &n)
		return n%3 == 0 && r.Header.Get("X-Caller") == "team"
	})
	var seen []string
	next := ""
	for pages := 0; ; pages++ {
		r := httptest.NewRequest("GET", "/tidemq/queues?limit=300&nextToken="+url.QueryEscape(next), nil)
		r.Header.Set("X-Caller", "team")
		decided = 0
		a := getQueues(h, r)
		if a.err != nil || a.code != http.StatusOK {
			t.Fatalf("page %d: %d %s", pages, a.code, a.body)
		}
		if decided > 3*300+3 {
			t.Errorf("page %d decided %d queues for 300 shown", pages, decided)
		}
		seen = append(seen, a.names()...)
		if next = a.nextToken; next == "" {
			break
		}
	}
	if len(seen) != 834 {
		t.Fatalf("%d queues listed, want the 834 visible ones", len(seen))
	}
	for i, n := range seen {
		if want := fmt.Sprintf("q%05d", 3*i); n != want {
			t.Fatalf("queue %d is %s, want %s", i, n, want)
		}
	}
	// Another caller sees none of them.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/tidemq/queues", nil))
	if body := rec.Body.String(); rec.Code != http.StatusOK || body != "{\"queues\":[]}\n" {
		t.Errorf("a caller who may see nothing: %d %s", rec.Code, body)
	}
}

// A page of GET /tidemq/queues over the engine snapshots the page's
// queues, not every queue: at 10,000 queues a page of 100 allocates far
// less than one object per queue (cutting the page out of Snapshot made
// an ARN and a snapshot for each of the 10,000, some 30 MB at 100,000
// queues for every page).
func TestQueuesPageCostsItsQueues(t *testing.T) {
	eng, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	const n = 10000
	for i := range n {
		if _, err := eng.CreateQueue(context.Background(), tidemq.CreateQueueParams{Name: fmt.Sprintf("q%05d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	h := Queues(eng)
	get := func(query string) (names []string, next string) {
		a := getQueues(h, httptest.NewRequest("GET", "/tidemq/queues"+query, nil))
		if a.err != nil || a.code != http.StatusOK {
			t.Fatalf("GET /tidemq/queues%s: %d %s", query, a.code, a.body)
		}
		return a.names(), a.nextToken
	}
	names, next := get("?limit=100&nextToken=" + url.QueryEscape(tidemq.PageToken("q04999")))
	if len(names) != 100 || names[0] != "q05000" || names[99] != "q05099" || next != tidemq.PageToken("q05099") {
		t.Fatalf("the page after q04999: %d queues, %v ... , next %q", len(names), names[:min(len(names), 1)], next)
	}
	if names, next := get("?limit=100&nextToken=" + url.QueryEscape(tidemq.PageToken("q09949"))); len(names) != 50 || next != "" {
		t.Fatalf("the last page: %d queues, next %q; want 50 and none", len(names), next)
	}
	r := httptest.NewRequest("GET", "/tidemq/queues?limit=100&nextToken="+url.QueryEscape(tidemq.PageToken("q04999")), nil)
	allocs := testing.AllocsPerRun(5, func() {
		h.ServeHTTP(httptest.NewRecorder(), r)
	})
	if allocs > n/5 {
		t.Errorf("a page of 100 of %d queues: %.0f allocations, want under %d (well below one per queue)", n, allocs, n/5)
	}
	t.Logf("a page of 100 of %d queues: %.0f allocations", n, allocs)
}

// countingPager is a SnapshotPager over sorted snapshots that counts the
// pages it is asked for.
type countingPager struct {
	fixedSnapshots
	pages int
}

func (p *countingPager) SnapshotsAfter(after string, n int) ([]tidemq.QueueSnapshot, error) {
	p.pages++
	return tidemq.SnapshotPage(p.fixedSnapshots, after, n)
}

// A caller who may see few of many queues gets its page from a bounded
// number of the store's pages: with 10,000 queues and ?limit=1, asking for
// limit+1 queues at a time took 5,000 pages for one answer, each of them a
// pass of the engine's lock over every queue (its dead-letter targets) or
// a transaction of PostgreSQL's.
func TestVisibleQueuesFewVisibleAskFewPages(t *testing.T) {
	p := &countingPager{fixedSnapshots: make(fixedSnapshots, 10000)}
	for i := range p.fixedSnapshots {
		p.fixedSnapshots[i].Name = fmt.Sprintf("q%05d", i)
		p.fixedSnapshots[i].ARN = "arn:aws:sqs:us-east-1:000000000000:" + p.fixedSnapshots[i].Name
	}
	mine := map[string]bool{"arn:aws:sqs:us-east-1:000000000000:q00007": true, "arn:aws:sqs:us-east-1:000000000000:q09998": true}
	h := VisibleQueues(p, func(r *http.Request, arn string) bool { return mine[arn] })
	var seen []string
	next := ""
	for pages := 0; pages < 5; pages++ {
		a := getQueues(h, httptest.NewRequest("GET", "/tidemq/queues?limit=1&nextToken="+url.QueryEscape(next), nil))
		if a.err != nil || a.code != http.StatusOK {
			t.Fatalf("page %d: %d %s", pages, a.code, a.body)
		}
		seen = append(seen, a.names()...)
		if next = a.nextToken; next == "" {
			break
		}
	}
	if want := []string{"q00007", "q09998"}; fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("listed %v, want %v", seen, want)
	}
	if p.pages > 40 {
		t.Errorf("two answers of one queue each asked the store for %d pages, want a few dozen at most", p.pages)
	}
}
