package alarms

import (
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
)

// Thresholds are one queue's alarm settings. A zero duration or share turns
// that alarm off for the queue.
type Thresholds struct {
	// DLQNotEmpty fires while a dead-letter queue has visible messages.
	DLQNotEmpty bool
	// OldestAgeShare fires while the oldest message is older than this
	// share of the queue's retention period (0.5: half-way to silent
	// expiry).
	OldestAgeShare float64
	// NoReceive fires while a queue that is not a dead-letter queue has
	// visible messages and no consumer has asked for messages for this
	// long: the consumer is gone, stuck or disabled.
	NoReceive time.Duration
	// GrowthWindow fires while a queue's depth (visible + delayed + in
	// flight) has grown at every evaluation for at least this long:
	// consumers are not keeping up. Dead-letter queues are left to
	// DLQNotEmpty.
	GrowthWindow time.Duration
	// ExpiredWindow fires while messages of the queue reached the end of
	// its retention period within this window: they were dropped, with no
	// dead-letter entry (seed: "silent expiry"). Dead-letter queues too.
	ExpiredWindow time.Duration
	// TriggerErrorWindow fires while a trigger polling the queue had
	// failed invocations (errors, timeouts, throttles, unusable
	// batchItemFailures answers) within this window.
	TriggerErrorWindow time.Duration
}

// Defaults are the thresholds of every queue without an override.
var Defaults = Thresholds{
	DLQNotEmpty:        true,
	OldestAgeShare:     0.5,
	NoReceive:          15 * time.Minute,
	GrowthWindow:       10 * time.Minute,
	ExpiredWindow:      time.Hour,
	TriggerErrorWindow: 5 * time.Minute,
}

// Config is the thresholds of every queue: defaults and per-queue
// overrides. The zero Config uses Defaults everywhere.
type Config struct {
	Defaults Thresholds
	// Queues are overrides by queue name or path.Match pattern
	// ("batch-*"); an exact name wins over a pattern, and patterns are
	// tried in lexical order.
	Queues map[string]Override
}

// Override changes some of a queue's thresholds; nil fields keep the
// default.
type Override struct {
	DLQNotEmpty    *bool
	OldestAgeShare *float64
	NoReceive      *time.Duration
	GrowthWindow   *time.Duration
	ExpiredWindow  *time.Duration
	// TriggerErrorWindow applies to the triggers that poll the queue.
	TriggerErrorWindow *time.Duration
}

// DefaultConfig returns a Config with Defaults and no overrides.
func DefaultConfig() Config { return Config{Defaults: Defaults} }

// For returns the thresholds of the named queue.
func (c Config) For(queue string) Thresholds {
	t := c.Defaults
	if o, ok := c.override(queue); ok {
		o.apply(&t)
	}
	return t
}

func (c Config) override(queue string) (Override, bool) {
	if o, ok := c.Queues[queue]; ok {
		return o, true
	}
	for _, p := range c.patterns() {
		if ok, _ := path.Match(p, queue); ok {
			return c.Queues[p], true
		}
	}
	return Override{}, false
}

func (c Config) patterns() []string {
	var ps []string
	for k := range c.Queues {
		if strings.ContainsAny(k, "*?[") {
			ps = append(ps, k)
		}
	}
	sort.Strings(ps)
	return ps
}

func (o Override) apply(t *Thresholds) {
	if o.DLQNotEmpty != nil {
		t.DLQNotEmpty = *o.DLQNotEmpty
	}
	if o.OldestAgeShare != nil {
		t.OldestAgeShare = *o.OldestAgeShare
	}
	if o.NoReceive != nil {
		t.NoReceive = *o.NoReceive
	}
	if o.GrowthWindow != nil {
		t.GrowthWindow = *o.GrowthWindow
	}
	if o.ExpiredWindow != nil {
		t.ExpiredWindow = *o.ExpiredWindow
	}
	if o.TriggerErrorWindow != nil {
		t.TriggerErrorWindow = *o.TriggerErrorWindow
	}
}

// fileThresholds is how thresholds are written in a config file: every
// field optional, durations as Go durations ("15m"), "0" or "off" to turn
// an alarm off.
type fileThresholds struct {
	DLQNotEmpty    *bool    `yaml:"dlq_not_empty"`
	OldestAgeShare *float64 `yaml:"oldest_age_share"`
	NoReceive      *string  `yaml:"no_receive"`
	GrowthWindow   *string  `yaml:"growth_window"`
	ExpiredWindow  *string  `yaml:"expired_window"`
	// trigger_error_window applies to the triggers that poll the queue.
	TriggerErrorWindow *string `yaml:"trigger_error_window"`
}

type file struct {
	Defaults fileThresholds            `yaml:"defaults"`
	Queues   map[string]fileThresholds `yaml:"queues"`
}

// ParseConfig reads an alarms config file (YAML, or JSON, which is YAML):
//
//	defaults:
//	  no_receive: 30m
//	queues:
//	  orders:
//	    growth_window: 5m
//	  "batch-*":
//	    no_receive: off
//	    expired_window: off
//	    trigger_error_window: 15m
//
// Unknown keys are errors, so that a misspelt threshold is not silently
// ignored.
func ParseConfig(data []byte) (Config, error) {
	var f file
	if err := yaml.UnmarshalWithOptions(data, &f, yaml.DisallowUnknownField()); err != nil {
		return Config{}, err
	}
	c := DefaultConfig()
	d, err := f.Defaults.override("defaults")
	if err != nil {
		return Config{}, err
	}
	d.apply(&c.Defaults)
	if len(f.Queues) > 0 {
		c.Queues = make(map[string]Override, len(f.Queues))
	}
	for name, ft := range f.Queues {
		if _, err := path.Match(name, ""); err != nil {
			return Config{}, fmt.Errorf("queues: bad pattern %q: %w", name, err)
		}
		o, err := ft.override("queues." + name)
		if err != nil {
			return Config{}, err
		}
		c.Queues[name] = o
	}
	return c, nil
}

// LoadConfig reads an alarms config file.
func LoadConfig(file string) (Config, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return Config{}, err
	}
	c, err := ParseConfig(data)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", file, err)
	}
	return c, nil
}

func (f fileThresholds) override(where string) (Override, error) {
	o := Override{DLQNotEmpty: f.DLQNotEmpty, OldestAgeShare: f.OldestAgeShare}
	if s := f.OldestAgeShare; s != nil && (*s < 0 || *s > 1) {
		return o, fmt.Errorf("%s.oldest_age_share must be between 0 and 1, got %v", where, *s)
	}
	var err error
	if o.NoReceive, err = parseDuration(f.NoReceive); err != nil {
		return o, fmt.Errorf("%s.no_receive: %w", where, err)
	}
	if o.GrowthWindow, err = parseDuration(f.GrowthWindow); err != nil {
		return o, fmt.Errorf("%s.growth_window: %w", where, err)
	}
	if o.ExpiredWindow, err = parseDuration(f.ExpiredWindow); err != nil {
		return o, fmt.Errorf("%s.expired_window: %w", where, err)
	}
	if o.TriggerErrorWindow, err = parseDuration(f.TriggerErrorWindow); err != nil {
		return o, fmt.Errorf("%s.trigger_error_window: %w", where, err)
	}
	return o, nil
}

func parseDuration(s *string) (*time.Duration, error) {
	if s == nil {
		return nil, nil
	}
	var d time.Duration
	switch strings.TrimSpace(*s) {
	case "0", "off", "":
	default:
		var err error
		if d, err = time.ParseDuration(*s); err != nil {
			return nil, err
		}
		if d < 0 {
			return nil, fmt.Errorf("negative duration %s", *s)
		}
	}
	return &d, nil
}

// merge returns o with the fields that p sets replaced by p's.
func (o Override) merge(p Override) Override {
	if p.DLQNotEmpty != nil {
		o.DLQNotEmpty = p.DLQNotEmpty
	}
	if p.OldestAgeShare != nil {
		o.OldestAgeShare = p.OldestAgeShare
	}
	if p.NoReceive != nil {
		o.NoReceive = p.NoReceive
	}
	if p.GrowthWindow != nil {
		o.GrowthWindow = p.GrowthWindow
	}
	if p.ExpiredWindow != nil {
		o.ExpiredWindow = p.ExpiredWindow
	}
	if p.TriggerErrorWindow != nil {
		o.TriggerErrorWindow = p.TriggerErrorWindow
	}
	return o
}

// WithOverride returns a copy of c in which the named queue (an exact
// name) has the override that applies to it now — its own, or the pattern
// that matches it — with the fields that o sets replaced. c is unchanged.
func (c Config) WithOverride(queue string, o Override) Config {
	cur, _ := c.override(queue)
	out := Config{Defaults: c.Defaults, Queues: make(map[string]Override, len(c.Queues)+1)}
	for k, v := range c.Queues {
		out.Queues[k] = v
	}
	out.Queues[queue] = cur.merge(o)
	return out
}
