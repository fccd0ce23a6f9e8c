package bench_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/bench"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"

	apisqs "github.com/tidemq/tidemq/api/sqs"
)

// The queues scenario creates the queues that are missing (CreateQueue of
// an existing one changes nothing), and reports the sizes of the pages it
// fetched and the RSS it read, failing on a page that does not answer 200.
func TestRunQueues(t *testing.T) {
	e, err := engine.Open(engine.Options{Store: mem.New(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CreateQueue(context.Background(), tidemq.CreateQueueParams{Name: "q-000003"}); err != nil {
		t.Fatal(err)
	}
	sqsAPI := apisqs.NewHandler(apisqs.Config{Broker: e})
	var gets atomic.Int32
	pages := map[string]string{
		"/metrics":              "# HELP x\nprocess_resident_memory_bytes 1.2345e+08\n",
		"/tidemq/queues":        `{"queues":[]}`,
		"/console/api/overview": `{"queues":[],"total":0}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
			body, ok := pages[r.URL.Path]
			if !ok {
				http.NotFound(w, r)
				return
			}
			io.WriteString(w, body)
			return
		}
		sqsAPI.ServeHTTP(w, r)
	}))
	defer srv.Close()
	get := func(ctx context.Context, path string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
		return http.DefaultClient.Do(req)
	}
	cfg := bench.QueuesConfig{Queues: 50, Prefix: "q", Clients: 4, Scrapes: 3, Concurrent: 5, Get: get}
	res, err := bench.RunQueues(context.Background(), bench.NewRawClient(srv.URL, 8), cfg)
	if err != nil {
		t.Fatal(err)
	}
	names, err := e.ListQueues(context.Background(), tidemq.ListQueuesParams{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Created != 50 || len(names.Names) != 50 {
		t.Errorf("created %d, the server holds %d queues, want 50", res.Created, len(names.Names))
	}
	if res.IdleRSS != 123450000 || res.MetricsBytes != len(pages["/metrics"]) ||
		res.QueuesPageBytes != len(pages["/tidemq/queues"]) || res.OverviewBytes != len(pages["/console/api/overview"]) {
		t.Errorf("result %+v", res)
	}
	// The RSS is read from /metrics (no RSS function): once idle, once
	// before the concurrent scrapes and twice after them, and once after
	// the pages; 3 timed scrapes, 5 concurrent ones, 3 of each page, and
	// the one page of the walk over /tidemq/queues.
	if n := gets.Load(); n != 5+3+5+3+3+1 {
		t.Errorf("%d GETs, want %d", n, 5+3+5+3+3+1)
	}

	// The RSS of a local process, read from /proc (Linux).
	if _, err := os.Stat("/proc/self/status"); err == nil {
		rss, err := bench.ProcessRSS(os.Getpid())()
		if err != nil || rss <= 0 {
			t.Errorf("ProcessRSS: %d, %v", rss, err)
		}
	}

	// A page that does not answer 200 fails the run.
	delete(pages, "/console/api/overview")
	if _, err := bench.RunQueues(context.Background(), bench.NewRawClient(srv.URL, 8), cfg); err == nil ||
		!strings.Contains(err.Error(), "/console/api/overview: status 404") {
		t.Errorf("missing overview: %v", err)
	}
}
