package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/storage/diskguard"
)

// guardDisk wraps the broker so that sends are refused while the data
// directory's file system has less than --min-free-disk free (checked
// every second); receives, deletes and everything else go on, so that
// consumers drain the queues and free the space. It returns b unchanged
// when the guard is off or there is no data directory (--in-memory,
// --store postgres).
func (o *serveOptions) guardDisk(b tidemq.Broker, log *slog.Logger) (tidemq.Broker, *diskguard.Guard) {
	if o.minFreeDiskMiB <= 0 || o.inMemory || isPostgresStore(o.store) {
		return b, nil
	}
	g := diskguard.New(o.dataDir, uint64(o.minFreeDiskMiB)<<20, log)
	g.Check()
	go g.Run(context.Background(), time.Second)
	return &diskGuarded{Broker: b, g: g}, g
}

// diskGuarded refuses sends while its guard is low.
type diskGuarded struct {
	tidemq.Broker
	g *diskguard.Guard
}

// Unwrap returns the guarded broker (see summaryOf).
func (b *diskGuarded) Unwrap() tidemq.Broker { return b.Broker }

// SendMessages refuses while the disk is nearly full (refusal).
func (b *diskGuarded) SendMessages(ctx context.Context, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	if err := b.refusal(); err != nil {
		return nil, err
	}
	return b.Broker.SendMessages(ctx, p)
}

// SendToQueues refuses as SendMessages does (see tidemq.QueuesSender).
func (b *diskGuarded) SendToQueues(ctx context.Context, ps []tidemq.SendMessagesParams) ([][]tidemq.SendResult, error) {
	if err := b.refusal(); err != nil {
		return nil, err
	}
	return tidemq.SendToQueues(ctx, b.Broker, ps)
}

// refusal is a send's ServiceUnavailable (HTTP 503, which every SDK
// retries) while the disk is nearly full: nothing is accepted that the
// store might not be able to keep. nil otherwise.
func (b *diskGuarded) refusal() error {
	if !b.g.Low() {
		return nil
	}
	free, _ := b.g.Free()
	return tidemq.Errorf(tidemq.ErrServiceUnavailable,
		"The server's disk is nearly full (%d MiB free, below its minimum of %d MiB): sends are refused until consumers drain the queues; retry later.",
		free>>20, b.g.Min()>>20)
}

// diskCollectors are the guard's metrics.
func diskCollectors(g *diskguard.Guard) []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tidemq_disk_free_bytes",
			Help: "Free space of the data directory's file system, checked every second."},
			func() float64 { f, _ := g.Free(); return float64(f) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tidemq_sends_refused_disk_low",
			Help: "1 while sends are refused because the disk has less than --min-free-disk free."},
			func() float64 {
				if g.Low() {
					return 1
				}
				return 0
			}),
	}
}
