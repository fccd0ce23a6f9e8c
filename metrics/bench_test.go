package metrics_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/alarms"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/metrics"
	"github.com/tidemq/tidemq/storage/mem"
)

var (
	engMu   sync.Mutex
	engines = map[int]*engine.Engine{}
)

// bigEngine is an in-memory engine with n empty queues (made once per
// process and n: 100,000 take about ten seconds).
func bigEngine(b *testing.B, n int) *engine.Engine {
	engMu.Lock()
	defer engMu.Unlock()
	if eng := engines[n]; eng != nil {
		return eng
	}
	eng, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for i := 0; i < n; i++ {
		if _, err := eng.CreateQueue(ctx, tidemq.CreateQueueParams{Name: fmt.Sprintf("queue-%06d", i)}); err != nil {
			b.Fatal(err)
		}
	}
	engines[n] = eng
	return eng
}

// scrapeHandlers are, with the server's alarms evaluated over the same
// queues (5 alarms a queue, as `tidemq serve` has them by default): the
// behaviour before issue 25 ("old": every queue's series, client_golang's
// handler computing each scrape on its own); the default that followed
// ("snapshot": 500 queues' series and the totals, shared scrapes, from
// every queue's snapshot and every alarm); and the default now ("new": the
// engine's Summary and the alarms of the queues shown).
func scrapeHandlers(b *testing.B, eng *engine.Engine) map[string]http.Handler {
	ev := alarms.New(alarms.Options{Snapshots: eng.Snapshot, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ev.Evaluate()
	all := func() []metrics.AlarmState { return states(ev.Alarms()) }
	old := metrics.New(metrics.Options{Snapshots: eng.Snapshot, Alarms: all, QueueSeries: metrics.AllQueueSeries})
	snap := metrics.New(metrics.Options{Snapshots: eng.Snapshot, Alarms: all})
	cur := metrics.New(metrics.Options{Snapshots: eng.Snapshot, Summary: eng.Summary, Alarms: all,
		AlarmsFor: func(queues []string) []metrics.AlarmState { return states(ev.Shown(queues)) }})
	return map[string]http.Handler{"old": old.UnsharedHandler(), "snapshot": snap.Handler(), "new": cur.Handler()}
}

func states(as []alarms.Alarm) []metrics.AlarmState {
	out := make([]metrics.AlarmState, len(as))
	for i, a := range as {
		out[i] = metrics.AlarmState{Alarm: a.Alarm, Queue: a.Queue, Trigger: a.Trigger, Firing: a.State == alarms.StateFiring}
	}
	return out
}

// BenchmarkScrape100kQueues is one GET /metrics of a server with 100,000
// queues, the default before and now, alternating: time per scrape, and
// bytes/scrape.
//
//	go test ./metrics -run '^$' -bench Scrape100k -benchtime 5x -count 3
func BenchmarkScrape100kQueues(b *testing.B) {
	eng := bigEngine(b, 100_000)
	hs := scrapeHandlers(b, eng)
	for _, name := range []string{"snapshot", "new"} {
		b.Run(name, func(b *testing.B) {
			var size int
			cpu := cpuTime()
			for i := 0; i < b.N; i++ {
				rec := httptest.NewRecorder()
				hs[name].ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
				size = rec.Body.Len()
			}
			// The process's CPU time per scrape (garbage collection
			// included): on a shared machine the wall time says more
			// about the other processes than about the scrape.
			b.ReportMetric((cpuTime()-cpu).Seconds()*1000/float64(b.N), "cpu-ms/scrape")
			b.ReportMetric(float64(size), "bytes/scrape")
		})
	}
}

// BenchmarkScrape20Concurrent is 20 concurrent scrapes: the peak heap
// above what it was before they started (sampled every millisecond), and
// the time until all are answered. The old behaviour runs on 10,000
// queues only: on 100,000, 20 of its scrapes would take some 15 GB (six
// took a server to 4.1 GB).
//
//	go test ./metrics -run '^$' -bench Scrape20Concurrent -benchtime 3x
func BenchmarkScrape20Concurrent(b *testing.B) {
	for _, c := range []struct {
		name   string
		queues int
	}{{"old/10k", 10_000}, {"snapshot/100k", 100_000}, {"new/100k", 100_000}} {
		if f := os.Getenv("TIDEMQ_BENCH_SCRAPE"); f != "" && !strings.HasPrefix(c.name, f) {
			continue
		}
		eng := bigEngine(b, c.queues)
		name := strings.Split(c.name, "/")[0]
		hs := scrapeHandlers(b, eng)
		b.Run(c.name, func(b *testing.B) {
			var peakMiB float64
			for i := 0; i < b.N; i++ {
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				base := ms.HeapInuse
				var peak atomic.Uint64
				stop := make(chan struct{})
				sampled := make(chan struct{})
				go func() {
					defer close(sampled)
					t := time.NewTicker(time.Millisecond)
					defer t.Stop()
					for {
						var ms runtime.MemStats
						runtime.ReadMemStats(&ms)
						if ms.HeapInuse > peak.Load() {
							peak.Store(ms.HeapInuse)
						}
						select {
						case <-stop:
							return
						case <-t.C:
						}
					}
				}()
				var wg sync.WaitGroup
				for j := 0; j < 20; j++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						rec := httptest.NewRecorder()
						hs[name].ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
					}()
				}
				wg.Wait()
				close(stop)
				<-sampled
				if p := peak.Load(); p > base {
					peakMiB = max(peakMiB, float64(p-base)/(1<<20))
				}
			}
			b.ReportMetric(peakMiB, "peak-heap-MiB")
		})
	}
}

// cpuTime is the CPU time the process used so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
