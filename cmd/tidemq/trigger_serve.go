package main

import (
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/trigger"
)

// triggerOptions are the serve flags of the triggers.
type triggerOptions struct {
	allowCommands bool
}

func (t *triggerOptions) addFlags(f *pflag.FlagSet) {
	f.BoolVar(&t.allowCommands, "allow-trigger-commands", false, "let triggers run commands (anyone who reaches the admin API could run any program)")
}

// triggers is the server's trigger manager, running.
type triggers struct {
	m       *trigger.Manager
	handler http.Handler // the admin API under trigger.APIPath
}

// startTriggers starts the trigger manager on store, its share of the one
// store of the server (in memory with --in-memory): the triggers, their
// targets' secrets included, are kept there under trg/. The manager
// closes store. At the first start on the data directory of a release
// that kept them in DATA_DIR/triggers.json, that file is imported first
// and renamed triggers.json.imported (see trigger.ImportFile).
func startTriggers(b tidemq.Broker, store storage.Store, reg prometheus.Registerer, o *serveOptions, log *slog.Logger) (*triggers, error) {
	if !o.inMemory {
		if err := trigger.ImportFile(store, legacyTriggersFile(o), log); err != nil {
			store.Close()
			return nil, err
		}
	}
	m, err := trigger.NewManager(trigger.Options{Broker: b, Store: store, AllowCommands: o.triggers.allowCommands, Logger: log})
	if err != nil {
		return nil, err
	}
	if reg != nil {
		if err := reg.Register(&triggerCollector{m: m}); err != nil {
			m.Close(context.Background())
			return nil, err
		}
	}
	m.Start()
	return &triggers{m: m, handler: m.Handler()}, nil
}

// legacyTriggersFile is where releases before the one store kept the
// triggers: triggers.json in the data directory.
func legacyTriggersFile(o *serveOptions) string { return filepath.Join(o.dataDir, trigger.LegacyFile) }

// stop ends the polls and waits up to d for invocations in flight, and
// closes the manager's share of the store. A second stop does nothing.
func (t *triggers) stop(d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_ = t.m.Close(ctx)
}

// triggerCollector exposes trigger.Manager.Stats, named after Lambda's
// CloudWatch metrics.
type triggerCollector struct{ m *trigger.Manager }

var (
	trigLabels      = []string{"trigger", "queue"}
	trigInvocations = prometheus.NewDesc("tidemq_trigger_invocations_total", "Invocations of a trigger's target (Lambda: Invocations).", trigLabels, nil)
	trigErrors      = prometheus.NewDesc("tidemq_trigger_errors_total", "Failed invocations: error, timeout or throttle (Lambda: Errors).", trigLabels, nil)
	trigTimeouts    = prometheus.NewDesc("tidemq_trigger_timeouts_total", "Invocations that ran past the function timeout.", trigLabels, nil)
	trigThrottles   = prometheus.NewDesc("tidemq_trigger_throttles_total", "Invocations the target refused with HTTP 429 (Lambda: Throttles).", trigLabels, nil)
	trigInvalid     = prometheus.NewDesc("tidemq_trigger_invalid_responses_total", "Unusable batchItemFailures responses (the whole batch failed).", trigLabels, nil)
	trigDuration    = prometheus.NewDesc("tidemq_trigger_duration_seconds_total", "Time spent in invocations (Lambda: Duration).", trigLabels, nil)
	trigConcurrent  = prometheus.NewDesc("tidemq_trigger_concurrent_invocations", "Invocations running now (Lambda: ConcurrentExecutions).", trigLabels, nil)
	trigMessages    = prometheus.NewDesc("tidemq_trigger_messages_total", "Messages settled by a trigger, by outcome: deleted, failed or filtered.", append(trigLabels, "outcome"), nil)
)

func (c *triggerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{trigInvocations, trigErrors, trigTimeouts, trigThrottles, trigInvalid, trigDuration, trigConcurrent, trigMessages} {
		ch <- d
	}
}

func (c *triggerCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.m.Stats() {
		l := []string{s.Name, s.Queue}
		ch <- prometheus.MustNewConstMetric(trigInvocations, prometheus.CounterValue, float64(s.Invocations), l...)
		ch <- prometheus.MustNewConstMetric(trigErrors, prometheus.CounterValue, float64(s.Errors), l...)
		ch <- prometheus.MustNewConstMetric(trigTimeouts, prometheus.CounterValue, float64(s.Timeouts), l...)
		ch <- prometheus.MustNewConstMetric(trigThrottles, prometheus.CounterValue, float64(s.Throttles), l...)
		ch <- prometheus.MustNewConstMetric(trigInvalid, prometheus.CounterValue, float64(s.InvalidResponses), l...)
		ch <- prometheus.MustNewConstMetric(trigDuration, prometheus.CounterValue, s.DurationSeconds, l...)
		ch <- prometheus.MustNewConstMetric(trigConcurrent, prometheus.GaugeValue, float64(s.ConcurrentInvocations), l...)
		ch <- prometheus.MustNewConstMetric(trigMessages, prometheus.CounterValue, float64(s.MessagesDeleted), s.Name, s.Queue, "deleted")
		ch <- prometheus.MustNewConstMetric(trigMessages, prometheus.CounterValue, float64(s.MessagesFailed), s.Name, s.Queue, "failed")
		ch <- prometheus.MustNewConstMetric(trigMessages, prometheus.CounterValue, float64(s.MessagesFiltered), s.Name, s.Queue, "filtered")
	}
}
