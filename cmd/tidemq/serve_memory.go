package main

import (
	"context"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tidemq/tidemq"
)

// guardMemory wraps the broker so that sends are refused while the
// process's resident memory is above --max-memory (checked every second):
// the memory high-water mark. Receives, deletes and everything else go on,
// so that consumers drain what the server holds; nothing accepted is
// dropped. It returns b unchanged when the mark is off.
func (o *serveOptions) guardMemory(b tidemq.Broker, log *slog.Logger) (tidemq.Broker, *memGuard) {
	if o.maxMemoryMiB <= 0 {
		return b, nil
	}
	g := &memGuard{max: uint64(o.maxMemoryMiB) << 20, read: residentBytes, log: log}
	g.check()
	go g.run(context.Background(), time.Second)
	return &memGuarded{Broker: b, g: g}, g
}

// memGuard samples the resident memory and says whether it is above max.
type memGuard struct {
	max  uint64
	read func() uint64
	log  *slog.Logger
	rss  atomic.Uint64
	high atomic.Bool
}

func (g *memGuard) check() {
	rss := g.read()
	g.rss.Store(rss)
	high := rss > g.max
	if g.high.Swap(high) != high {
		if high {
			g.log.Warn("memory above --max-memory: new sends are refused until it falls", "resident_mib", rss>>20, "max_mib", g.max>>20)
		} else {
			g.log.Info("memory below --max-memory again: sends are accepted", "resident_mib", rss>>20, "max_mib", g.max>>20)
		}
	}
}

func (g *memGuard) run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			g.check()
		}
	}
}

// memGuarded refuses sends while its guard is high.
type memGuarded struct {
	tidemq.Broker
	g *memGuard
}

// Unwrap returns the guarded broker (see summaryOf).
func (b *memGuarded) Unwrap() tidemq.Broker { return b.Broker }

// SendMessages refuses while memory is above its mark (refusal).
func (b *memGuarded) SendMessages(ctx context.Context, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	if err := b.refusal(); err != nil {
		return nil, err
	}
	return b.Broker.SendMessages(ctx, p)
}

// SendToQueues refuses as SendMessages does (see tidemq.QueuesSender).
func (b *memGuarded) SendToQueues(ctx context.Context, ps []tidemq.SendMessagesParams) ([][]tidemq.SendResult, error) {
	if err := b.refusal(); err != nil {
		return nil, err
	}
	return tidemq.SendToQueues(ctx, b.Broker, ps)
}

// refusal is a send's ServiceUnavailable (HTTP 503, which every SDK
// retries) while memory is above its mark, as the disk's mark does; nil
// otherwise.
func (b *memGuarded) refusal() error {
	if !b.g.high.Load() {
		return nil
	}
	return tidemq.Errorf(tidemq.ErrServiceUnavailable,
		"The server's memory is above its limit (%d MiB resident, --max-memory %d MiB): sends are refused until consumers drain the queues; retry later.",
		b.g.rss.Load()>>20, b.g.max>>20)
}

// memoryCollectors are the guard's metrics.
func memoryCollectors(g *memGuard) []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tidemq_sends_refused_memory_high",
			Help: "1 while sends are refused because resident memory is above --max-memory."},
			func() float64 {
				if g.high.Load() {
					return 1
				}
				return 0
			}),
	}
}

// residentBytes is the process's resident set (Linux: /proc/self/statm);
// elsewhere, the memory the Go runtime holds from the system and has not
// returned.
func residentBytes() uint64 {
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 1 {
			if pages, err := strconv.ParseUint(f[1], 10, 64); err == nil {
				return pages * uint64(os.Getpagesize())
			}
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Sys - ms.HeapReleased
}
