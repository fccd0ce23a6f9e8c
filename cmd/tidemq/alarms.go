package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
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
		ev = alarms.New(alarms.Options{Snapshots: eng.Snapshot, Interval: o.alarms.interval, Config: &cfg, Webhook: hook, Logger: log})
		obs.alarms = ev
		go ev.Run(ctx)
		mo.Alarms = func() []metrics.AlarmState { return alarmStates(ev.Alarms()) }
		mo.AlarmsFor = func(queues []string) []metrics.AlarmState { return alarmStates(ev.Shown(queues)) }
		log.Info("alarms on", "interval", o.alarms.interval, "webhook", o.alarms.webhook != "", "config", o.alarms.config)
	}
	obs.metrics = metrics.New(mo)
	obs.queuesHandler = server.Queues(eng.Snapshot)
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
	for b != nil {
		if s, ok := b.(summarizer); ok {
			return s.Summary
		}
		u, ok := b.(interface{ Unwrap() tidemq.Broker })
		if !ok {
			return nil
		}
		b = u.Unwrap()
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

func newAlarmsCommand() *cobra.Command {
	var admin adminOptions
	var asJSON, all bool
	cmd := &cobra.Command{
		Use:   "alarms",
		Short: "List the alarms a tidemq server evaluates",
		Long: `List the alarms a running tidemq server evaluates (GET /tidemq/alarms): the
firing ones, or all of them with --all. The exit status is 0 whether or not
alarms fire; use --json for scripts.

The alarms: dlq_not_empty (a dead-letter queue has visible messages),
oldest_message_age (older than a share of the retention period, 50% by
default), consumer_gone (visible messages and no receive for 15 minutes),
sustained_growth (depth grew at every evaluation for 10 minutes),
messages_expired (messages reached the end of the retention period in the
last hour), and, per trigger, trigger_errors (failed invocations in the last
5 minutes; the summary names the trigger).`,
		Example: `  tidemq alarms
  tidemq alarms --all --endpoint http://tidemq.internal:9324
  tidemq alarms rules > prometheus-rules.yml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			hc, err := admin.httpClient(cmd.Context(), nil)
			if err != nil {
				return err
			}
			l, err := fetchAlarms(cmd.Context(), hc, admin.endpoint)
			if err != nil {
				return err
			}
			if !all {
				firing := l.Alarms[:0]
				for _, a := range l.Alarms {
					if a.State == alarms.StateFiring {
						firing = append(firing, a)
					}
				}
				l.Alarms = firing
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(l)
			}
			return printAlarms(cmd.OutOrStdout(), l.Alarms, time.Now(), all)
		},
	}
	f := cmd.Flags()
	admin.register(f)
	f.BoolVar(&asJSON, "json", false, "print JSON")
	f.BoolVar(&all, "all", false, "include alarms that are OK")
	bindEnv(cmd)
	cmd.AddCommand(newRulesCommand(), newDashboardCommand())
	return cmd
}

func fetchAlarms(ctx context.Context, client *http.Client, endpoint string) (*alarms.List, error) {
	url := strings.TrimRight(endpoint, "/") + "/tidemq/alarms"
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if err := adminError(http.MethodGet, url, resp.StatusCode, body); err != nil {
		return nil, err
	}
	var l alarms.List
	if err := json.Unmarshal(body, &l); err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	return &l, nil
}

// printAlarms writes the alarms as a table.
func printAlarms(w io.Writer, as []alarms.Alarm, now time.Time, all bool) error {
	if len(as) == 0 {
		if all {
			_, err := fmt.Fprintln(w, "no alarms evaluated yet")
			return err
		}
		_, err := fmt.Fprintln(w, "no alarms firing")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STATE\tQUEUE\tALARM\tFOR\tSUMMARY")
	for _, a := range as {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.State, a.Queue, a.Alarm, now.Sub(a.Since).Round(time.Second), a.Summary)
	}
	return tw.Flush()
}
