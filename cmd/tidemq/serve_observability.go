package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/alarms"
	"github.com/tidemq/tidemq/internal/server"
	"github.com/tidemq/tidemq/metrics"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/pebble"
)

// alarmOptions are the serve flags of the built-in alarms, and of the
// metrics (both read the queues' snapshots).
type alarmOptions struct {
	off      bool
	webhook  string
	interval time.Duration
	config   string
	// queueSeries is --metrics-queue-series: how many queues get
	// per-queue series in /metrics (-1: all, 0: none).
	queueSeries int
}

func (a *alarmOptions) addFlags(f *pflag.FlagSet) {
	f.BoolVar(&a.off, "no-alarms", false, "do not evaluate the built-in alarms")
	f.StringVar(&a.webhook, "alarm-webhook", "", "URL that receives alarm transitions (Alertmanager webhook JSON)")
	f.DurationVar(&a.interval, "alarm-interval", alarms.DefaultInterval, "how often the alarms are evaluated")
	f.StringVar(&a.config, "alarms-config", "", "YAML or JSON file of alarm thresholds: defaults and per-queue overrides")
	f.IntVar(&a.queueSeries, "metrics-queue-series", metrics.DefaultQueueSeries, "how many queues get per-queue series in /metrics, the deepest first (-1: every queue, 0: none); the tidemq_queues_* totals count every queue")
}

// metricsQueueSeries is --metrics-queue-series as metrics.Options.QueueSeries.
func (a *alarmOptions) metricsQueueSeries() int {
	switch {
	case a.queueSeries < 0:
		return metrics.AllQueueSeries
	case a.queueSeries == 0:
		return metrics.NoQueueSeries
	}
	return a.queueSeries
}

// observability is the server's metrics and alarms, running.
type observability struct {
	metrics *metrics.Metrics
	alarms  *alarms.Evaluator // nil with --no-alarms
	// leaderHook gates the webhook with --store postgres: only the node
	// holding the leader lease notifies. nil otherwise.
	leaderHook *alarms.LeaderWebhook
	stop       context.CancelFunc
	// visit is the broker's Visit (the engine's), nil when it has none:
	// the console's overview takes the queues one at a time through it.
	visit func(func(*tidemq.QueueSnapshot)) bool
	// The handlers of GET /tidemq/queues and GET /tidemq/alarms.
	queuesHandler, alarmsHandler http.Handler
}

// startObservability builds the metrics and the handlers of GET /metrics,
// GET /tidemq/queues and GET /tidemq/alarms, and starts the alarm evaluator.
func startObservability(eng tidemq.Snapshotter, store storage.Store, o *serveOptions, log *slog.Logger) (*observability, error) {
	cfg := alarms.DefaultConfig()
	if o.alarms.config != "" {
		var err error
		if cfg, err = alarms.LoadConfig(o.alarms.config); err != nil {
			return nil, fmt.Errorf("--alarms-config: %w", err)
		}
	}
	if o.alarms.webhook != "" && !strings.HasPrefix(o.alarms.webhook, "http://") && !strings.HasPrefix(o.alarms.webhook, "https://") {
		return nil, fmt.Errorf("--alarm-webhook must be an http:// or https:// URL, got %q", o.alarms.webhook)
	}
	ctx, cancel := context.WithCancel(context.Background())
	obs := &observability{stop: cancel}
	mo := metrics.Options{Snapshots: eng.Snapshot, QueueSeries: o.alarms.metricsQueueSeries()}
	mo.Summary = summaryOf(eng)
	if ps, ok := store.(*pebble.Store); ok {
		mo.Storage = func() metrics.StorageStats {
			s := ps.Stats()
			return metrics.StorageStats{SyncedCommits: s.SyncedCommits, Fsyncs: s.Fsyncs, FsyncSeconds: s.FsyncSeconds,
				FsyncBuckets: metrics.Rebucket(s.FsyncBuckets, metrics.FsyncBuckets)}
		}
	}
	var ev *alarms.Evaluator
	if !o.alarms.off {
		var hook alarms.Webhook
		if o.alarms.webhook != "" {
			hook = alarms.StartWebhook(ctx, &alarms.HTTPWebhook{URL: o.alarms.webhook, ExternalURL: o.publicURL, Logger: log})
			if isPostgresStore(o.store) {
				obs.leaderHook = &alarms.LeaderWebhook{Webhook: hook}
				hook = obs.leaderHook
			}
		}
		ev = alarms.New(alarms.Options{Snapshots: eng.Snapshot, Visit: visitOf(eng), Interval: o.alarms.interval, Config: &cfg, Webhook: hook, Logger: log})
		obs.alarms = ev
		go ev.Run(ctx)
		mo.Alarms = func() []metrics.AlarmState { return alarmStates(ev.Alarms()) }
		mo.AlarmsFor = func(queues []string) []metrics.AlarmState { return alarmStates(ev.Shown(queues)) }
		log.Info("alarms on", "interval", o.alarms.interval, "webhook", o.alarms.webhook != "", "config", o.alarms.config)
	}
	obs.metrics = metrics.New(mo)
	obs.queuesHandler = server.VisibleQueues(pagedSnapshots(eng), o.access.visible())
	obs.visit = visitOf(eng)
	obs.alarmsHandler = server.Alarms(ev)
	return obs, nil
}

// summarizer is a broker whose totals cost no snapshot of every queue
// (engine.Engine).
type summarizer interface {
	Summary(limit int) (tidemq.QueueTotals, []tidemq.QueueSnapshot)
}

// summaryOf returns the Summary of b, or of the broker it wraps, or nil.
func summaryOf(b any) func(int) (tidemq.QueueTotals, []tidemq.QueueSnapshot) {
	if s, ok := unwrapTo[summarizer](b); ok {
		return s.Summary
	}
	return nil
}

// unwrapTo returns b, or the broker it wraps (and so on), as a T.
func unwrapTo[T any](b any) (T, bool) {
	for b != nil {
		if t, ok := b.(T); ok {
			return t, true
		}
		u, ok := b.(interface{ Unwrap() tidemq.Broker })
		if !ok {
			break
		}
		b = u.Unwrap()
	}
	var zero T
	return zero, false
}

// pagedSnapshots is b, with the SnapshotsAfter of b or of the broker it
// wraps (the engine's, PostgreSQL's) when it has one: GET /tidemq/queues
// then snapshots a page's queues, not every queue for each page.
func pagedSnapshots(b tidemq.Snapshotter) tidemq.Snapshotter {
	if p, ok := unwrapTo[tidemq.SnapshotPager](b); ok {
		return pager{b, p}
	}
	return b
}

// pager is a Snapshotter and the SnapshotPager of the broker it wraps.
type pager struct {
	tidemq.Snapshotter
	tidemq.SnapshotPager
}

// visitOf returns the Visit of b, or of the broker it wraps, or nil.
func visitOf(b any) func(func(*tidemq.QueueSnapshot)) bool {
	if v, ok := unwrapTo[tidemq.Visitor](b); ok {
		return v.Visit
	}
	return nil
}

// alarmStates converts alarms for the metrics.
func alarmStates(as []alarms.Alarm) []metrics.AlarmState {
	out := make([]metrics.AlarmState, len(as))
	for i, a := range as {
		out[i] = metrics.AlarmState{Alarm: a.Alarm, Queue: a.Queue, Trigger: a.Trigger, Firing: a.State == alarms.StateFiring}
	}
	return out
}
