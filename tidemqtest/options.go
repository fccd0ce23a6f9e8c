package tidemqtest

import (
	"log/slog"
	"time"
)

// An Option configures NewServer.
type Option func(*options)

type options struct {
	realClock     bool
	start         time.Time
	dataDir       *string // nil: in memory
	config        string
	configParams  map[string]string
	noLint        bool
	region        string
	accountID     string
	allowCommands bool
	logger        *slog.Logger
}

// WithRealClock runs the server on the system clock: srv.Clock is nil and
// timeouts pass in real time.
func WithRealClock() Option { return func(o *options) { o.realClock = true } }

// WithClockAt starts the fake clock at t instead of the time NewServer is
// called.
func WithClockAt(t time.Time) Option { return func(o *options) { o.start = t } }

// WithDataDir keeps the state in a Pebble store in dir, as `tidemq serve
// --data-dir` does, instead of in memory; "" means a new temporary
// directory removed when the test ends. Two servers one after the other on
// the same dir see the same queues and messages.
func WithDataDir(dir string) Option { return func(o *options) { o.dataDir = &dir } }

// WithConfig applies a tidemq.yaml or a CloudFormation/SAM template at
// start, as `tidemq serve --config` does, after linting it: an error
// finding fails the test. params are a template's parameters (NAME to
// VALUE), as --config-param gives them.
func WithConfig(path string, params map[string]string) Option {
	return func(o *options) { o.config, o.configParams = path, params }
}

// WithoutLint applies WithConfig's topology without linting it, as
// `tidemq serve --no-lint` does: for a template whose queues are consumed
// by the test itself, which the lint cannot see (TQ005, a queue with
// producers and no event source, is an error).
func WithoutLint() Option { return func(o *options) { o.noLint = true } }

// WithRegion sets the server's home region (default us-east-1), the region
// of AWSConfig.
func WithRegion(region string) Option { return func(o *options) { o.region = region } }

// WithAccountID sets the account id of queue URLs and ARNs (default
// 000000000000).
func WithAccountID(id string) Option { return func(o *options) { o.accountID = id } }

// WithTriggerCommands lets triggers run commands and Lambda functions on
// this machine, as `tidemq serve --allow-trigger-commands` does.
func WithTriggerCommands() Option { return func(o *options) { o.allowCommands = true } }

// WithLogger sends the server's logs to l. By default they are kept and
// written to the test's log only if the test fails.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }
