package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidemq/tidemq"
)

// QueuesConfig describes a run of the queues scenario: a server holding
// many empty queues, idle, then scraped (issue 25's targets: RSS under
// 200 MiB idle at 100,000 queues; a default /metrics scrape under 1 MB
// and 100 ms; 20 concurrent scrapes add under 50 MiB).
type QueuesConfig struct {
	// Queues is how many queues the server should hold; the run creates
	// those of Prefix-000000 ... that are missing (CreateQueue of an
	// existing queue is a no-op) and leaves them all in place.
	Queues  int
	Prefix  string
	Clients int
	// Idle is how long to wait, once the queues exist, before reading the
	// idle RSS (a running server settles: its sweeps and alarms run, the
	// Go runtime returns what it freed).
	Idle time.Duration
	// Scrapes is how many sequential scrapes of each page are timed.
	Scrapes int
	// Concurrent is how many scrapes of /metrics are sent at once.
	Concurrent int
	// Get fetches a path of the server (/metrics, /tidemq/queues, ...),
	// signed if the server needs it.
	Get func(ctx context.Context, path string) (*http.Response, error)
	// RSS reads the server's resident memory in bytes; nil: read it from
	// the process_resident_memory_bytes of a /metrics scrape, which
	// misses the peak of concurrent scrapes.
	RSS func() (int64, error)
	// Progress, if set, is called with the queues created so far.
	Progress func(done int64)
}

// QueuesResult is what a queues run measured. Sizes are bytes, times
// are wall-clock.
type QueuesResult struct {
	Queues       int           `json:"queues"`
	Created      int64         `json:"created"`
	CreateTime   time.Duration `json:"create_ns"`
	IdleRSS      int64         `json:"idle_rss_bytes"`
	MetricsBytes int           `json:"metrics_bytes"`
	// MetricsTime is the median of the sequential scrapes, MetricsMax
	// the slowest.
	MetricsTime time.Duration `json:"metrics_ns"`
	MetricsMax  time.Duration `json:"metrics_max_ns"`
	// ConcurrentTime is how long Concurrent scrapes sent at once took to
	// all be answered; ConcurrentRSSGrowth is the highest RSS seen while
	// they ran (sampled every 5 ms) less the RSS just before.
	Concurrent          int           `json:"concurrent"`
	ConcurrentTime      time.Duration `json:"concurrent_ns"`
	ConcurrentRSSGrowth int64         `json:"concurrent_rss_growth_bytes"`
	RSSAfter            int64         `json:"rss_after_bytes"`
	QueuesPageBytes     int           `json:"queues_page_bytes"`
	QueuesPageTime      time.Duration `json:"queues_page_ns"`
	OverviewBytes       int           `json:"overview_bytes"`
	OverviewTime        time.Duration `json:"overview_ns"`
	// RSSAfterPages is the RSS once the pages of /tidemq/queues and the
	// overviews above were answered.
	RSSAfterPages int64 `json:"rss_after_pages_bytes"`
	// QueuesWalkTime is how long every page of /tidemq/queues took, read
	// as tidemq queues and tidemq top read them (adminclient: pages of
	// MaxSnapshotPageSize, each after the last one's nextToken), and
	// QueuesWalked how many queues they listed.
	QueuesWalkTime time.Duration `json:"queues_walk_ns"`
	QueuesWalked   int           `json:"queues_walked"`
}

// RunQueues runs the queues scenario.
func RunQueues(ctx context.Context, client Client, cfg QueuesConfig) (QueuesResult, error) {
	if cfg.Clients <= 0 {
		cfg.Clients = 16
	}
	if cfg.Scrapes <= 0 {
		cfg.Scrapes = 3
	}
	if cfg.Concurrent <= 0 {
		cfg.Concurrent = 20
	}
	if cfg.Prefix == "" {
		cfg.Prefix = "tidemq-bench-q"
	}
	res := QueuesResult{Queues: cfg.Queues, Concurrent: cfg.Concurrent}
	start := time.Now()
	if err := createQueues(ctx, client, cfg, &res); err != nil {
		return res, err
	}
	res.CreateTime = time.Since(start)
	pause(ctx, cfg.Idle)
	rss := cfg.RSS
	if rss == nil {
		rss = func() (int64, error) { return scrapedRSS(ctx, cfg.Get) }
	}
	var err error
	if res.IdleRSS, err = rss(); err != nil {
		return res, err
	}
	if res.MetricsBytes, res.MetricsTime, res.MetricsMax, err = timeGets(ctx, cfg.Get, "/metrics", cfg.Scrapes); err != nil {
		return res, err
	}
	if res.ConcurrentTime, res.ConcurrentRSSGrowth, err = concurrentScrapes(ctx, cfg, rss); err != nil {
		return res, err
	}
	if res.RSSAfter, err = rss(); err != nil {
		return res, err
	}
	if res.QueuesPageBytes, res.QueuesPageTime, _, err = timeGets(ctx, cfg.Get, "/tidemq/queues", cfg.Scrapes); err != nil {
		return res, err
	}
	if res.OverviewBytes, res.OverviewTime, _, err = timeGets(ctx, cfg.Get, "/console/api/overview", cfg.Scrapes); err != nil {
		return res, err
	}
	if res.RSSAfterPages, err = rss(); err != nil {
		return res, err
	}
	start = time.Now()
	if res.QueuesWalked, err = walkQueues(ctx, cfg.Get); err != nil {
		return res, err
	}
	res.QueuesWalkTime = time.Since(start)
	return res, nil
}

// walkQueues reads every page of /tidemq/queues, MaxSnapshotPageSize
// queues a page, and returns how many queues they held.
func walkQueues(ctx context.Context, fetch func(context.Context, string) (*http.Response, error)) (int, error) {
	n, token := 0, ""
	for {
		path := "/tidemq/queues?limit=" + strconv.Itoa(tidemq.MaxSnapshotPageSize)
		if token != "" {
			path += "&nextToken=" + url.QueryEscape(token)
		}
		body, err := get(ctx, fetch, path)
		if err != nil {
			return n, err
		}
		var page struct {
			Queues    []json.RawMessage `json:"queues"`
			NextToken string            `json:"nextToken"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			return n, fmt.Errorf("GET %s: %w", path, err)
		}
		n += len(page.Queues)
		if page.NextToken == "" || page.NextToken == token {
			return n, nil
		}
		token = page.NextToken
	}
}

// createQueues creates the queues Prefix-000000 ... with Clients workers.
func createQueues(ctx context.Context, client Client, cfg QueuesConfig, res *QueuesResult) error {
	var next, done atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for range cfg.Clients {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(cfg.Queues) || ctx.Err() != nil {
					return
				}
				name := fmt.Sprintf("%s-%06d", cfg.Prefix, i)
				var err error
				for try := 0; try < 10; try++ {
					if _, err = client.CreateQueue(ctx, name, nil); err == nil {
						break
					}
					pause(ctx, retryPause(try))
				}
				if err != nil {
					once.Do(func() { firstErr = fmt.Errorf("create queue %s: %w", name, err) })
					return
				}
				if n := done.Add(1); cfg.Progress != nil && n%1000 == 0 {
					cfg.Progress(n)
				}
			}
		})
	}
	wg.Wait()
	res.Created = done.Load()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return firstErr
}

// get fetches path and returns its body, failing on a status other
// than 200.
func get(ctx context.Context, fetch func(context.Context, string) (*http.Response, error), path string) ([]byte, error) {
	resp, err := fetch(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %d: %.200s", path, resp.StatusCode, body)
	}
	return body, nil
}

// timeGets fetches path n times in a row and returns the size of the
// last answer and the median and slowest time.
func timeGets(ctx context.Context, fetch func(context.Context, string) (*http.Response, error), path string, n int) (int, time.Duration, time.Duration, error) {
	var times []time.Duration
	size := 0
	for range n {
		start := time.Now()
		body, err := get(ctx, fetch, path)
		if err != nil {
			return 0, 0, 0, err
		}
		times = append(times, time.Since(start))
		size = len(body)
	}
	slices.Sort(times)
	return size, times[len(times)/2], times[len(times)-1], nil
}

// concurrentScrapes sends cfg.Concurrent scrapes of /metrics at once and
// samples the server's RSS while they run.
func concurrentScrapes(ctx context.Context, cfg QueuesConfig, rss func() (int64, error)) (time.Duration, int64, error) {
	before, err := rss()
	if err != nil {
		return 0, 0, err
	}
	peak := before
	stop := make(chan struct{})
	sampled := make(chan struct{})
	if cfg.RSS != nil {
		go func() {
			defer close(sampled)
			t := time.NewTicker(5 * time.Millisecond)
			defer t.Stop()
			for {
				if v, err := cfg.RSS(); err == nil && v > peak {
					peak = v
				}
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
		}()
	} else {
		close(sampled)
	}
	start := time.Now()
	errs := make(chan error, cfg.Concurrent)
	var wg sync.WaitGroup
	for range cfg.Concurrent {
		wg.Go(func() {
			_, err := get(ctx, cfg.Get, "/metrics")
			errs <- err
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(stop)
	<-sampled
	close(errs)
	for err := range errs {
		if err != nil {
			return 0, 0, err
		}
	}
	if cfg.RSS == nil {
		if v, err := rss(); err == nil && v > peak {
			peak = v
		}
	}
	return elapsed, peak - before, nil
}

// scrapedRSS reads process_resident_memory_bytes from a scrape.
func scrapedRSS(ctx context.Context, fetch func(context.Context, string) (*http.Response, error)) (int64, error) {
	body, err := get(ctx, fetch, "/metrics")
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "process_resident_memory_bytes "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return int64(f), err
		}
	}
	return 0, fmt.Errorf("/metrics has no process_resident_memory_bytes: give the server's process id")
}

// ProcessRSS returns a function that reads a local process's resident
// memory (VmRSS in /proc/PID/status; Linux only).
func ProcessRSS(pid int) func() (int64, error) {
	path := fmt.Sprintf("/proc/%d/status", pid)
	return func() (int64, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return 0, err
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				return kb << 10, err
			}
		}
		return 0, fmt.Errorf("%s: no VmRSS", path)
	}
}
