// Package trigger runs event source mappings: a trigger long-polls one queue
// of a tidemq.Broker and hands what it receives, in batches, to a target (an
// HTTP endpoint, a command or a Lambda function run through the Lambda
// Runtime API) as the Lambda SQS event, then deletes what the
// target processed. Settings, event shape and outcome rules are Lambda's
// (see reference/aws-sqs-sns-lambda.md §8):
//
//   - success deletes the batch; an error, a timeout or a throttle deletes
//     nothing, and the messages come back when their visibility timeout
//     runs out (the queue's RedrivePolicy eventually dead-letters them);
//   - with ReportBatchItemFailures the target's answer
//     {"batchItemFailures":[{"itemIdentifier":"<messageId>"}]} deletes every
//     message it does not list; an invalid answer fails the whole batch;
//   - on a FIFO queue a message group is in at most one batch at a time and
//     in order: the engine keeps a group locked while any of its messages is
//     in flight, and a trigger only receives again after the batch it
//     received is settled (deleted or left to time out);
//   - every failure is written into the story of each message it concerns
//     when the broker is a tidemq.FailureRecorder, so that a dead letter
//     says why it died;
//   - the function timeout must stay below the queue's visibility timeout:
//     checked at create and update as Lambda does, and again before every
//     batch, so that a timeout lowered under a running trigger pauses it
//     instead of processing messages twice (see visibility.go).
//
// Each trigger keeps its counters, a duration histogram per outcome and
// its last invocations in memory (invocations.go), for the admin API, the
// metrics and the alarms.
//
// Time: function timeouts and batching windows are measured in real time
// (they bound real work); visibility timeouts are the broker's, on its
// clock.
package trigger

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// ReportBatchItemFailures is the one value FunctionResponseTypes may hold.
const ReportBatchItemFailures = "ReportBatchItemFailures"

// Defaults and limits, as Lambda has them.
const (
	DefaultBatchSize   = 10
	MaxBatchSize       = 10000
	MaxFIFOBatchSize   = 10
	MaxBatchingWindow  = 300 // seconds
	DefaultTimeout     = 3   // seconds
	MaxTimeout         = 900 // seconds
	MinConcurrency     = 2
	MaxConcurrency     = 1000
	DefaultConcurrency = 5 // pollers when ScalingConfig is unset (Lambda starts with five)
	// RecommendedVisibilityFactor is AWS's advice: a queue visibility
	// timeout of at least six times the function timeout.
	RecommendedVisibilityFactor = 6
	// MinHeadroom is the margin under which a trigger is warned about even
	// when the factor is met: the time between the function timeout and the
	// visibility timeout is all a slow success has to delete its messages.
	MinHeadroom = 60 * time.Second
)

// Config is a trigger's settings. JSON names follow Lambda's
// CreateEventSourceMapping where Lambda has the setting.
type Config struct {
	// Name identifies the trigger: letters, digits, '-', '_' and '.', up
	// to 64 characters. Generated when empty.
	Name string `json:"Name"`
	// Queue is the name of the queue polled. It cannot change.
	Queue  string `json:"Queue"`
	Target Target `json:"Target"`
	// Enabled nil means true.
	Enabled                        *bool          `json:"Enabled,omitempty"`
	BatchSize                      int            `json:"BatchSize,omitempty"`
	MaximumBatchingWindowInSeconds int            `json:"MaximumBatchingWindowInSeconds,omitempty"`
	FunctionResponseTypes          []string       `json:"FunctionResponseTypes,omitempty"`
	ScalingConfig                  *ScalingConfig `json:"ScalingConfig,omitempty"`
	// Timeout is the function timeout in seconds (fractions allowed, a
	// tidemq extension for tests); 0 means 3. The HTTP call is cancelled or
	// the process killed when it passes, and that is a failure.
	Timeout        float64         `json:"Timeout,omitempty"`
	FilterCriteria *FilterCriteria `json:"FilterCriteria,omitempty"`
}

// Target is where batches go: exactly one of URL, Command and Function.
type Target struct {
	// URL receives the event as the body of a POST. A 2xx answer is a
	// success and its body the function's response; any other status is a
	// function error, 429 counted as a throttle.
	URL string `json:"URL,omitempty"`
	// Headers are added to every POST (an Authorization header, say).
	// Their values, like the URL's userinfo, are secrets: the admin API
	// shows them as Redacted (see secrets.go).
	Headers map[string]string `json:"Headers,omitempty"`
	// Command is run once per batch, the event on its standard input and
	// the response read from its standard output. A non-zero exit is a
	// function error.
	Command []string `json:"Command,omitempty"`
	// Dir is the command's working directory.
	Dir string `json:"Dir,omitempty"`
	// Function is a Lambda function run on the server (see Function).
	Function *Function `json:"Function,omitempty"`
}

// ScalingConfig caps concurrent invocations.
type ScalingConfig struct {
	MaximumConcurrency int `json:"MaximumConcurrency,omitempty"`
}

// FilterCriteria holds event filtering patterns; a message is delivered
// when any pattern matches it, and deleted unseen otherwise (as Lambda
// does). See Pattern for the supported subset.
type FilterCriteria struct {
	Filters []Filter `json:"Filters"`
}

// Filter is one pattern, as a JSON string.
type Filter struct {
	Pattern string `json:"Pattern"`
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// IsEnabled reports whether the trigger polls.
func (c *Config) IsEnabled() bool { return c.Enabled == nil || *c.Enabled }

// batchSize, timeout, concurrency and window apply the defaults.
func (c *Config) batchSize() int {
	if c.BatchSize == 0 {
		return DefaultBatchSize
	}
	return c.BatchSize
}

func (c *Config) timeout() time.Duration {
	if c.Timeout == 0 {
		return DefaultTimeout * time.Second
	}
	return time.Duration(c.Timeout * float64(time.Second))
}

func (c *Config) concurrency() int {
	if c.ScalingConfig == nil || c.ScalingConfig.MaximumConcurrency == 0 {
		return DefaultConcurrency
	}
	return c.ScalingConfig.MaximumConcurrency
}

func (c *Config) window() time.Duration {
	return time.Duration(c.MaximumBatchingWindowInSeconds) * time.Second
}

func (c *Config) reportsItemFailures() bool {
	return slices.Contains(c.FunctionResponseTypes, ReportBatchItemFailures)
}

// InvalidConfigError is a setting the trigger cannot have; the admin API
// answers it with 400.
type InvalidConfigError struct{ Msg string }

func (e *InvalidConfigError) Error() string { return e.Msg }

func invalid(format string, args ...any) error {
	return &InvalidConfigError{Msg: fmt.Sprintf(format, args...)}
}

// QueueFacts are what validation needs to know about the queue.
type QueueFacts struct {
	FIFO              bool
	VisibilityTimeout time.Duration
}

// Validate checks c against Lambda's rules and the queue's settings. It
// returns warnings for settings that work but are risky.
func (c *Config) Validate(q QueueFacts) (warnings []string, err error) {
	if !namePattern.MatchString(c.Name) {
		return nil, invalid("Name must be 1 to 64 letters, digits, '-', '_' or '.', not %q", c.Name)
	}
	if c.Queue == "" {
		return nil, invalid("Queue is required")
	}
	kinds := 0
	for _, given := range []bool{c.Target.URL != "", len(c.Target.Command) > 0, c.Target.Function != nil} {
		if given {
			kinds++
		}
	}
	switch {
	case kinds == 0:
		return nil, invalid("Target needs a URL, a Command or a Function")
	case kinds > 1:
		return nil, invalid("Target takes one of a URL, a Command and a Function")
	case c.Target.URL != "" && !regexp.MustCompile(`^https?://`).MatchString(c.Target.URL):
		// Only the scheme is quoted: the rest may hold a secret.
		if scheme, _, ok := strings.Cut(c.Target.URL, "://"); ok {
			return nil, invalid("Target.URL must be an http:// or https:// URL, not a %s:// one", scheme)
		}
		return nil, invalid("Target.URL must be an http:// or https:// URL, with its scheme")
	}
	if c.Target.URL != "" {
		// Checked here so that an invocation never fails to parse it: the
		// error of net/url quotes the whole URL, userinfo included.
		if _, err := url.Parse(c.Target.URL); err != nil {
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return nil, invalid("Target.URL %q is not a valid URL: %v", RedactURL(c.Target.URL), err)
		}
	}
	if c.Target.Function != nil {
		if err := c.validateFunction(); err != nil {
			return nil, err
		}
	}
	if where, ok := c.Target.hasRedacted(); ok {
		return nil, invalid("%s is %s, the placeholder of a secret the admin API does not show: give its value", where, Redacted)
	}
	bs := c.batchSize()
	if bs < 1 || bs > MaxBatchSize {
		return nil, invalid("BatchSize must be between 1 and %d, not %d", MaxBatchSize, bs)
	}
	if q.FIFO && bs > MaxFIFOBatchSize {
		return nil, invalid("BatchSize must be at most %d for a FIFO queue, not %d", MaxFIFOBatchSize, bs)
	}
	if w := c.MaximumBatchingWindowInSeconds; w < 0 || w > MaxBatchingWindow {
		return nil, invalid("MaximumBatchingWindowInSeconds must be between 0 and %d, not %d", MaxBatchingWindow, w)
	}
	if bs > 10 && c.MaximumBatchingWindowInSeconds == 0 {
		return nil, invalid("Maximum batch window in seconds must be greater than 0 if maximum batch size is greater than 10")
	}
	for _, t := range c.FunctionResponseTypes {
		if t != ReportBatchItemFailures {
			return nil, invalid("FunctionResponseTypes may only hold %q, not %q", ReportBatchItemFailures, t)
		}
	}
	if c.ScalingConfig != nil {
		if n := c.ScalingConfig.MaximumConcurrency; n < MinConcurrency || n > MaxConcurrency {
			return nil, invalid("ScalingConfig.MaximumConcurrency must be between %d and %d, not %d", MinConcurrency, MaxConcurrency, n)
		}
	}
	if c.Timeout < 0 || c.Timeout > MaxTimeout {
		return nil, invalid("Timeout must be between 0 and %d seconds, not %g", MaxTimeout, c.Timeout)
	}
	if c.FilterCriteria != nil {
		if len(c.FilterCriteria.Filters) > 5 {
			return nil, invalid("FilterCriteria holds at most 5 filters, not %d", len(c.FilterCriteria.Filters))
		}
		for i, f := range c.FilterCriteria.Filters {
			if _, err := ParsePattern(f.Pattern); err != nil {
				return nil, invalid("FilterCriteria.Filters[%d]: %v", i, err)
			}
		}
	}
	to, vis := c.timeout(), q.VisibilityTimeout
	if err := c.checkVisibility(vis); err != nil {
		return nil, err
	}
	if vis < RecommendedVisibilityFactor*to {
		warnings = append(warnings, fmt.Sprintf("the queue's visibility timeout (%s) is less than %d× the function timeout (%s), as AWS recommends", vis, RecommendedVisibilityFactor, to))
	}
	if q.FIFO {
		if risk := FIFOBatchOrderRisk(bs, c.reportsItemFailures()); risk != "" {
			warnings = append(warnings, risk)
		}
	}
	if head := vis - to - c.window(); head < MinHeadroom {
		warnings = append(warnings, fmt.Sprintf("only %s between the function timeout plus the batching window and the visibility timeout: a slow success may be delivered twice", head))
	}
	return warnings, nil
}

// VisibilityError says that a trigger's function timeout is not below its
// queue's visibility timeout: a message still being processed would become
// visible again and be delivered a second time. It is an
// InvalidConfigError for Create and Update (errors.As finds one); a
// running trigger whose queue's visibility timeout was lowered under it
// pauses with it (see runner.recheck).
type VisibilityError struct {
	Timeout, Visibility time.Duration
}

func (e *VisibilityError) Error() string {
	return fmt.Sprintf("the function timeout (%s) must be below the queue's visibility timeout (%s): otherwise a message still being processed becomes visible and is delivered again", e.Timeout, e.Visibility)
}

// Unwrap makes a VisibilityError an InvalidConfigError to errors.As (the
// admin API answers it with 400).
func (e *VisibilityError) Unwrap() error { return &InvalidConfigError{Msg: e.Error()} }

// checkVisibility is the rule AWS applies when an event source mapping is
// created: the function timeout must not reach the queue's visibility
// timeout. tidemq applies it at create and update, and again before every
// batch a running trigger receives.
func (c *Config) checkVisibility(vis time.Duration) error {
	if to := c.timeout(); to >= vis {
		return &VisibilityError{Timeout: to, Visibility: vis}
	}
	return nil
}

// clone returns a deep copy through JSON (configs are small).
func (c *Config) clone() *Config {
	b, _ := json.Marshal(c)
	var out Config
	_ = json.Unmarshal(b, &out)
	return &out
}
