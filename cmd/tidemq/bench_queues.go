package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/tidemq/tidemq/bench"
)

// runQueuesBench runs the queues scenario (bench.RunQueues): the admin
// pages are fetched signed for the "tidemq" service, as `tidemq top` does.
func runQueuesBench(ctx context.Context, o *benchOptions, client bench.Client, stdout, stderr io.Writer) error {
	admin := adminOptions{o.client}
	hc, err := admin.httpClient(ctx, nil)
	if err != nil {
		return err
	}
	endpoint := strings.TrimRight(o.client.endpoint, "/")
	cfg := bench.QueuesConfig{
		Queues: o.queues.queues, Prefix: o.queue + "-q", Clients: o.clients, Idle: o.queues.idle,
		Scrapes: o.queues.scrapes, Concurrent: o.queues.concurrent,
		Get: func(ctx context.Context, path string) (*http.Response, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+path, nil)
			if err != nil {
				return nil, err
			}
			return hc.Do(req)
		},
	}
	if o.queues.pid > 0 {
		cfg.RSS = bench.ProcessRSS(o.queues.pid)
	}
	if o.progress && !o.json {
		cfg.Progress = func(done int64) { fmt.Fprintf(stderr, "\rqueues %d created", done) }
		defer fmt.Fprint(stderr, "\r\033[K")
	}
	res, err := bench.RunQueues(ctx, client, cfg)
	if err != nil {
		return fmt.Errorf("queues: %w", err)
	}
	if o.json {
		b, _ := json.Marshal(res)
		fmt.Fprintln(stdout, string(b))
		return nil
	}
	mib := func(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/1e6) }
	fmt.Fprintf(stdout, "queues: %d (%d created or found in %s)\n", res.Queues, res.Created, res.CreateTime.Round(time.Millisecond))
	fmt.Fprintf(stdout, "idle RSS: %s\n", mib(res.IdleRSS))
	fmt.Fprintf(stdout, "/metrics: %d bytes, %s (median), %s (slowest)\n", res.MetricsBytes, ms(res.MetricsTime), ms(res.MetricsMax))
	fmt.Fprintf(stdout, "%d concurrent scrapes: %s, RSS +%s (RSS after: %s)\n", res.Concurrent, ms(res.ConcurrentTime), mib(res.ConcurrentRSSGrowth), mib(res.RSSAfter))
	fmt.Fprintf(stdout, "/tidemq/queues: %d bytes, %s\n", res.QueuesPageBytes, ms(res.QueuesPageTime))
	fmt.Fprintf(stdout, "/console/api/overview: %d bytes, %s (RSS after: %s)\n", res.OverviewBytes, ms(res.OverviewTime), mib(res.RSSAfterPages))
	fmt.Fprintf(stdout, "every page of /tidemq/queues: %d queues, %s\n", res.QueuesWalked, ms(res.QueuesWalkTime))
	return nil
}
