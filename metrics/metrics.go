// Package metrics exposes tidemq to Prometheus. Queue gauges and counters
// are read from the broker's snapshots at scrape time (the engine stays the
// one source of truth, nothing is counted twice); request, message-size and
// storage metrics are observed as they happen. Metric names follow the
// CloudWatch metrics of SQS where one exists (see the README table).
package metrics

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tidemq/tidemq"
)

// Options say where the metrics read their data from. Every function is
// called at scrape time and must be safe for concurrent use.
type Options struct {
	// Snapshots returns every queue's state (engine.Engine.Snapshot).
	Snapshots func() []tidemq.QueueSnapshot
	// Summary, when set, is used instead of Snapshots: the totals over
	// every queue and the snapshots of at most limit queues, the deepest
	// (engine.Engine.Summary), so that a scrape does not copy and sort
	// every queue's snapshot.
	Summary func(limit int) (tidemq.QueueTotals, []tidemq.QueueSnapshot)
	// Storage returns the store's counters; nil for a store without them
	// (in memory).
	Storage func() StorageStats
	// Alarms returns the alarms the server evaluates, firing or not; nil
	// when alarms are off.
	Alarms func() []AlarmState
	// AlarmsFor, when set, is used instead of Alarms by a scrape that has
	// per-queue series for some queues only: it returns at least every
	// firing alarm, every alarm of the queues named, and one alarm of
	// each name there is (for the count of each name firing).
	AlarmsFor func(queues []string) []AlarmState
	// NoRuntime leaves out the Go runtime and process collectors (tests).
	NoRuntime bool
	// QueueSeries is how many queues get per-queue series (the deepest,
	// when there are more; see queueCollector); the totals over every
	// queue are always there. 0: DefaultQueueSeries; NoQueueSeries: none;
	// AllQueueSeries: every queue.
	QueueSeries int
}

// DefaultQueueSeries is how many queues get per-queue series by default:
// a scrape of a server with 100,000 queues stays well under 1 MB.
const DefaultQueueSeries = 500

// NoQueueSeries and AllQueueSeries are the extremes of
// Options.QueueSeries.
const (
	NoQueueSeries  = -1
	AllQueueSeries = math.MaxInt
)

// StorageStats are the durable store's counters.
type StorageStats struct {
	// SyncedCommits counts batches committed with a sync (one per durable
	// write request); Fsyncs counts the WAL fsyncs that made them durable.
	// SyncedCommits/Fsyncs is the mean group-commit size.
	SyncedCommits uint64
	Fsyncs        uint64
	// FsyncSeconds is the total time spent in WAL fsyncs.
	FsyncSeconds float64
	// FsyncBuckets maps a bucket's upper bound in seconds to the
	// cumulative number of fsyncs that took at most that long.
	FsyncBuckets map[float64]uint64
}

// AlarmState is one alarm on one queue, or on one trigger of the queue.
type AlarmState struct {
	Alarm   string
	Queue   string
	Trigger string // "" for a queue alarm
	Firing  bool
}

// Metrics is the registry of tidemq's metrics.
type Metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	byAction sync.Map // action label → *actionStats
	errors   *prometheus.CounterVec
	sizes    *prometheus.HistogramVec
	// sizeQueues are the queues with their own message size histogram:
	// at most sizeLimit; the other queues' sizes are observed under
	// queue="".
	sizeQueues sync.Map
	sizeCount  atomic.Int64
	sizeLimit  int64
	scrapes    sharedScrape
}

// RequestBuckets are the bounds (seconds) of the request latency histogram.
var RequestBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30}

// SizeBuckets are the bounds (bytes) of the message size histogram, up to
// SQS's 1 MiB limit.
var SizeBuckets = []float64{64, 256, 1024, 4096, 16384, 65536, 262144, 1048576}

// New builds the metrics and registers them in a fresh registry.
func New(o Options) *Metrics {
	limit := o.QueueSeries
	switch {
	case limit == 0:
		limit = DefaultQueueSeries
	case limit < 0:
		limit = NoQueueSeries
	}
	m := &Metrics{
		sizeLimit: int64(max(limit, 0)),
		reg:       prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tidemq_requests_total",
			Help: "SQS and SNS API requests answered, by action (SNS's as SNS.<Action>) and HTTP status.",
		}, []string{"action", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "tidemq_request_duration_seconds",
			Help:    "Time to answer an SQS or SNS API request, by action (long polls included).",
			Buckets: RequestBuckets,
		}, []string{"action"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tidemq_request_errors_total",
			Help: "SQS and SNS API requests answered with an error, by action and error code.",
		}, []string{"action", "code"}),
		sizes: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "tidemq_message_size_bytes",
			Help:    "Size of accepted messages (body and message attributes, as SQS counts it), by queue (SentMessageSize).",
			Buckets: SizeBuckets,
		}, []string{"queue"}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.errors, m.sizes)
	if o.Summary == nil && o.Snapshots != nil {
		o.Summary = summaryOf(o.Snapshots)
	}
	if o.Summary != nil {
		m.reg.MustRegister(&queueCollector{summary: o.Summary, alarms: o.Alarms, alarmsFor: o.AlarmsFor, limit: limit})
	} else if o.Alarms != nil {
		m.reg.MustRegister(&alarmCollector{alarms: o.Alarms})
	}
	if o.Storage != nil {
		m.reg.MustRegister(&storageCollector{stats: o.Storage})
	}
	if !o.NoRuntime {
		m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	return m
}

// Registry returns the registry, for tests and for adding collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus text exposition format
// (GET /metrics). One scrape is computed at a time; scrapes that arrive
// while it runs share its result (scrape.go).
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(m.serveScrape)
}

// UnsharedHandler is the handler of client_golang, computing every scrape
// on its own: the behaviour before shared scrapes (benchmarks).
func (m *Metrics) UnsharedHandler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// ObserveRequest records one answered API request. code is the error code
// ("" on success). action must come from a bounded set so that hostile
// clients cannot grow the label set: the SQS handler passes a name from
// its action table (extensions included) or "unknown".
func (m *Metrics) ObserveRequest(action, code string, status int, d time.Duration) {
	if status == http.StatusOK {
		// The common case, without the label hashing of WithLabelValues.
		s := m.actionSeries(action)
		s.ok.Inc()
		s.latency.Observe(d.Seconds())
		return
	}
	m.requests.WithLabelValues(action, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(action).Observe(d.Seconds())
	if code != "" || status >= 400 {
		if code == "" {
			code = "HTTP" + strconv.Itoa(status)
		}
		m.errors.WithLabelValues(action, code).Inc()
	}
}

// actionStats are one action's series for successful requests.
type actionStats struct {
	ok      prometheus.Counter
	latency prometheus.Observer
}

// actionSeries returns action's series, made on first use (so that, as
// with WithLabelValues, an action appears only once it has been called).
func (m *Metrics) actionSeries(action string) *actionStats {
	if s, ok := m.byAction.Load(action); ok {
		return s.(*actionStats)
	}
	s, _ := m.byAction.LoadOrStore(action, &actionStats{
		ok:      m.requests.WithLabelValues(action, "200"),
		latency: m.latency.WithLabelValues(action),
	})
	return s.(*actionStats)
}

// ObserveMessageSize records the size of one accepted message.
func (m *Metrics) ObserveMessageSize(queue string, bytes int) {
	m.sizes.WithLabelValues(m.sizeLabel(queue)).Observe(float64(bytes))
}

// sizeLabel is the queue label of queue's message sizes: its name for the
// first sizeLimit queues that send, "" for the others.
func (m *Metrics) sizeLabel(queue string) string {
	if _, ok := m.sizeQueues.Load(queue); ok {
		return queue
	}
	if m.sizeCount.Load() >= m.sizeLimit {
		return ""
	}
	if _, loaded := m.sizeQueues.LoadOrStore(queue, true); !loaded {
		m.sizeCount.Add(1) // racing first sends may pass the limit by a few
	}
	return queue
}

// alarmCollector exposes tidemq_alarm_firing (queue alarms) and
// tidemq_trigger_alarm_firing (trigger alarms, with their trigger) when
// there are no queue snapshots; with them, queueCollector does.
type alarmCollector struct{ alarms func() []AlarmState }

var (
	alarmDesc = prometheus.NewDesc("tidemq_alarm_firing",
		"1 while the server-evaluated alarm fires on the queue, 0 while it is OK.", []string{"alarm", "queue"}, nil)
	triggerAlarmDesc = prometheus.NewDesc("tidemq_trigger_alarm_firing",
		"1 while the server-evaluated alarm fires on the trigger, 0 while it is OK.", []string{"alarm", "queue", "trigger"}, nil)
)

func (c *alarmCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- alarmDesc
	ch <- triggerAlarmDesc
	ch <- alarmsFiringDesc
}

func (c *alarmCollector) Collect(ch chan<- prometheus.Metric) {
	collectAlarms(ch, c.alarms(), nil)
}
