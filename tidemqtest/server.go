package tidemqtest

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awssns "github.com/aws/aws-sdk-go-v2/service/sns"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/alarms"
	"github.com/tidemq/tidemq/api/frontdoor"
	"github.com/tidemq/tidemq/api/sigv4"
	apisqs "github.com/tidemq/tidemq/api/sqs"
	"github.com/tidemq/tidemq/backup"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/console"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/internal/server"
	"github.com/tidemq/tidemq/internal/testlog"
	"github.com/tidemq/tidemq/metrics"
	topicstore "github.com/tidemq/tidemq/sns"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/storage/pebble"
	"github.com/tidemq/tidemq/topology"
	"github.com/tidemq/tidemq/trigger"
)

// Access key and secret of AWSConfig. The server does not check
// signatures (it runs without --auth), so any pair works; these are the
// ones its clients sign with.
const (
	AccessKeyID     = "tidemqtest"
	SecretAccessKey = "tidemqtest"
)

// Server is a running tidemq. Its fields are set by NewServer and must not
// be changed.
type Server struct {
	// URL is the server's endpoint, e.g. http://127.0.0.1:41234: SQS, SNS,
	// /health, /metrics, the admin API (/tidemq/...) and the console
	// (/console/).
	URL string
	// Region and AccountID are the server's home region and account.
	Region, AccountID string
	// Clock is the fake clock of every deadline (see the package comment),
	// or nil with WithRealClock.
	Clock *clocktest.Clock
	// Broker is the server's broker, for assertions that go around the
	// API (e.g. Broker.Snapshot()); requests should go through URL.
	Broker tidemq.Broker
	// Topics is the SNS topic service; Triggers the trigger manager;
	// Alarms the alarm evaluator.
	Topics   *topicstore.Service
	Triggers *trigger.Manager
	Alarms   *alarms.Evaluator

	t         testing.TB
	eng       *engine.Engine
	http      *frontdoor.Server
	stopAlarm context.CancelFunc
	logs      *testlog.Buffer // nil with WithLogger
	closeOnce sync.Once
}

// NewServer starts a tidemq for the test t and stops it when the test
// ends (t.Cleanup): in memory on a fake clock unless options say
// otherwise. A server that cannot start fails the test.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	o := options{region: "us-east-1", accountID: tidemq.DefaultAccountID}
	for _, opt := range opts {
		opt(&o)
	}
	s := &Server{t: t, Region: o.region, AccountID: o.accountID}
	log := o.logger
	if log == nil {
		s.logs = &testlog.Buffer{}
		log = slog.New(slog.NewTextHandler(s.logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	var clock tidemq.Clock = tidemq.SystemClock{}
	if !o.realClock {
		start := o.start
		if start.IsZero() {
			start = time.Now()
		}
		s.Clock = clocktest.New(start)
		clock = s.Clock
	}
	t.Cleanup(s.Close)

	// The topology is read and linted before anything is opened, as
	// `tidemq serve --config` does.
	var config *topology.Config
	if o.config != "" {
		var err error
		if config, err = loadConfig(o); err != nil {
			t.Fatalf("tidemqtest: %v", err)
		}
	}

	// Listen first: the topic service needs the address for the
	// SubscribeURLs it sends.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("tidemqtest: listen: %v", err)
	}
	s.URL = "http://" + ln.Addr().String()

	var store storage.Store
	if o.dataDir == nil {
		store = mem.New()
	} else {
		dir := *o.dataDir
		if dir == "" {
			dir = t.TempDir()
		}
		if store, err = pebble.Open(dir, pebble.Options{Logger: log}); err != nil {
			ln.Close()
			t.Fatalf("tidemqtest: open %s: %v", dir, err)
		}
	}
	// One store for the queues, the topics and the triggers, each closing
	// its share; the last closes the store (as in `tidemq serve`).
	shared := storage.Share(store)
	s.eng, err = engine.Open(engine.Options{Store: shared, Clock: clock, Region: o.region, AccountID: o.accountID, Logger: log})
	if err != nil {
		ln.Close()
		store.Close()
		t.Fatalf("tidemqtest: open the engine: %v", err)
	}
	s.Broker = s.eng
	fail := func(format string, args ...any) {
		t.Helper()
		ln.Close()
		s.Close()
		t.Fatalf("tidemqtest: "+format, args...)
	}

	// Metrics and alarms (the alarms on the server's clock).
	ctx, cancel := context.WithCancel(context.Background())
	s.stopAlarm = cancel
	s.Alarms = alarms.New(alarms.Options{Snapshots: s.eng.Snapshot, Clock: clock, Logger: log})
	go s.Alarms.Run(ctx)
	if s.Clock != nil {
		// The evaluator's timer is the one timer of an idle server: once it
		// is set, a test that counts timers (Clock.WaitForTimers) to tell
		// that a long poll waits starts from a quiet clock.
		s.Clock.WaitForTimers(1, 10*time.Second)
	}
	met := metrics.New(metrics.Options{Snapshots: s.eng.Snapshot, NoRuntime: true, Alarms: func() []metrics.AlarmState {
		as := s.Alarms.Alarms()
		out := make([]metrics.AlarmState, len(as))
		for i, a := range as {
			out[i] = metrics.AlarmState{Alarm: a.Alarm, Queue: a.Queue, Trigger: a.Trigger, Firing: a.State == alarms.StateFiring}
		}
		return out
	}})
	broker := met.Broker(s.eng)

	s.Triggers, err = trigger.NewManager(trigger.Options{Broker: s.eng, Store: shared.Share(), AllowCommands: o.allowCommands,
		Logger: log, HomeRegion: o.region, RequestRegion: sigv4.ScopeRegion})
	if err != nil {
		fail("start the triggers: %v", err)
	}
	if err := met.Registry().Register(metrics.NewTriggerCollector(s.Triggers.Stats)); err != nil {
		fail("trigger metrics: %v", err)
	}
	s.Triggers.Start()
	s.Alarms.SetTriggers(s.Triggers.Stats)

	s.Topics, err = topicstore.Open(topicstore.Options{Broker: broker, Region: o.region, AccountID: o.accountID, Logger: log,
		PublicURL: s.URL, Store: shared.Share(), Clock: clock})
	if err != nil {
		fail("open the topics: %v", err)
	}
	met.RegisterTopics(s.Topics.Stats)

	if config != nil {
		plan, err := topology.ApplyAll(context.Background(), server.TopologyTargets(s.eng, s.Topics, s.Triggers, s.Alarms), config, false)
		if err != nil {
			fail("apply %s: %v", config.File, err)
		}
		for _, ch := range plan.Changes {
			if ch.Action == topology.ActionSkip {
				log.Info("config: "+ch.Kind+" not applied", ch.Kind, ch.Name, "reason", ch.Reason)
			}
		}
	}

	protocols := server.ProtocolOptions{Broker: broker, Topics: s.Topics,
		Region: o.region, AccountID: o.accountID, Logger: log, Observe: met.ObserveRequest}
	con := console.New(console.Options{Broker: broker, Topics: s.Topics, Region: o.region, AccountID: o.accountID,
		Alarms: s.Alarms.Alarms, Clock: clock, SQS: server.ConsoleSQS(protocols), Visit: s.eng.Visit})
	door := frontdoor.New(frontdoor.Config{MaxBody: apisqs.MaxRequestBodyBytes, Logger: log})
	var cp storage.Checkpointer
	if c, ok := store.(storage.Checkpointer); ok {
		cp = c
	}
	server.Mount(door, server.Routes{
		Health:        server.Health(s.eng, false, log),
		Metrics:       met.Handler(),
		Queues:        server.Queues(s.eng),
		Alarms:        server.Alarms(s.Alarms),
		Trigger:       s.Triggers.Handler(),
		Backup:        backup.Handler(cp, backup.Options{Logger: log}), // off: a test has no --backup-dir
		ConsoleAssets: console.Assets(),
		ConsoleAPI:    con.API(),
		Protocols:     server.Protocols(protocols),
	}, map[string]bool{"health": true, "metrics": true})
	s.http, err = frontdoor.NewServer(door, frontdoor.ServerConfig{
		ReadTimeout: frontdoor.DefaultReadTimeout, WriteTimeout: frontdoor.DefaultWriteTimeout,
		IdleTimeout: frontdoor.DefaultIdleTimeout, MaxConns: frontdoor.DefaultMaxConns,
	})
	if err != nil {
		fail("%v", err)
	}
	go func() { _ = s.http.Serve(ln) }()
	log.Info("tidemqtest listening", "url", s.URL, "fake_clock", s.Clock != nil, "on_disk", o.dataDir != nil)
	return s
}

// loadConfig reads and lints the topology of WithConfig.
func loadConfig(o options) (*topology.Config, error) {
	c, _, err := topology.Load(o.config, topology.ImportOptions{Region: o.region, AccountID: o.accountID,
		Parameters: o.configParams, ParamFlag: "WithConfig's params"})
	if err != nil {
		return nil, err
	}
	if o.noLint {
		return c, nil
	}
	var errs []string
	for _, f := range topology.Lint(c) {
		if f.Severity == topology.SeverityError {
			errs = append(errs, f.String())
		}
	}
	if len(errs) > 0 {
		return nil, &lintError{file: o.config, findings: errs}
	}
	return c, nil
}

type lintError struct {
	file     string
	findings []string
}

func (e *lintError) Error() string {
	return e.file + ": lint found errors, so nothing was applied (WithoutLint skips the check):\n" + strings.Join(e.findings, "\n")
}

// Close stops the server, in the order `tidemq serve` stops: the triggers,
// then the long polls are answered and the requests finished, then the
// topics and the broker close. The test's cleanup calls it; calling it
// earlier (to test a restart on WithDataDir) is allowed, and a second call
// does nothing.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		if s.Triggers != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_ = s.Triggers.Close(ctx)
			cancel()
		}
		if s.eng != nil {
			s.eng.Drain()
		}
		if s.http != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := s.http.Shutdown(ctx); err != nil {
				s.t.Errorf("tidemqtest: requests still running at shutdown: %v", err)
			}
			cancel()
		}
		if s.Topics != nil {
			s.Topics.Close()
		}
		if s.stopAlarm != nil {
			s.stopAlarm()
		}
		if s.eng != nil {
			if err := s.eng.Close(); err != nil {
				s.t.Errorf("tidemqtest: close: %v", err)
			}
		}
		if s.logs != nil && s.t.Failed() {
			s.t.Logf("tidemqtest: the server's log:\n%s", s.logs.String())
		}
	})
}

// AWSConfig is an aws-sdk-go-v2 configuration for the server: its
// endpoint, its region and static credentials. It reads nothing from the
// environment or ~/.aws, so a developer's AWS settings cannot send a
// test's requests to AWS.
func (s *Server) AWSConfig() aws.Config {
	return aws.Config{
		Region:       s.Region,
		Credentials:  credentials.NewStaticCredentialsProvider(AccessKeyID, SecretAccessKey, ""),
		BaseEndpoint: aws.String(s.URL),
	}
}

// SQS is an SQS client of the server.
func (s *Server) SQS() *awssqs.Client { return awssqs.NewFromConfig(s.AWSConfig()) }

// SNS is an SNS client of the server.
func (s *Server) SNS() *awssns.Client { return awssns.NewFromConfig(s.AWSConfig()) }

// QueueURL is the URL of the queue name in the server's home region, as
// CreateQueue and GetQueueUrl return it.
func (s *Server) QueueURL(name string) string { return s.URL + "/" + s.AccountID + "/" + name }
