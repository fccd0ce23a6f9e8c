package trigger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/tidemq/tidemq"
)

// Options configure a Manager.
type Options struct {
	// Broker is the broker whose queues are polled. Required.
	Broker tidemq.Broker
	// Path is the JSON file the triggers are kept in; "" keeps them in
	// memory only.
	Path string
	// WaitTimeSeconds is the long-poll wait of each receive: 20 (Lambda's)
	// when 0. A negative value short-polls (tests).
	WaitTimeSeconds int
	// AllowCommands permits command targets. Off by default: whoever can
	// reach the admin API could otherwise run any program on the server.
	AllowCommands bool
	// HTTPClient posts to URL targets. Default: a client without a global
	// timeout (each call is bounded by the function timeout).
	HTTPClient *http.Client
	Logger     *slog.Logger
}

// Manager owns the triggers of one broker: it validates, persists, starts
// and stops them. It is safe for concurrent use.
//
// Lock order: Manager.mu, then runner.mu. Manager.mu is held across broker
// calls made to validate a trigger and while a replaced trigger stops (at
// most its function timeout).
type Manager struct {
	o   Options
	log *slog.Logger

	mu       sync.Mutex
	triggers map[string]*runner
	started  bool
	closed   bool

	// invokeCtx is cancelled only when Close gives up waiting: stopping a
	// trigger ends its polls at once but lets invocations finish.
	invokeCtx    context.Context
	cancelInvoke context.CancelFunc
}

// NotFoundError names a trigger that does not exist.
type NotFoundError struct{ Name string }

func (e *NotFoundError) Error() string { return fmt.Sprintf("no trigger named %q", e.Name) }

// ExistsError names a trigger that exists already.
type ExistsError struct{ Name string }

func (e *ExistsError) Error() string { return fmt.Sprintf("a trigger named %q exists already", e.Name) }

// NewManager loads the triggers kept at o.Path. They start with Start.
func NewManager(o Options) (*Manager, error) {
	if o.Broker == nil {
		return nil, errors.New("trigger: Options.Broker is required")
	}
	if o.WaitTimeSeconds == 0 {
		o.WaitTimeSeconds = tidemq.MaxWaitTimeSeconds
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	m := &Manager{o: o, log: o.Logger, triggers: make(map[string]*runner)}
	m.invokeCtx, m.cancelInvoke = context.WithCancel(context.Background())
	cfgs, err := m.load()
	if err != nil {
		return nil, err
	}
	for _, c := range cfgs {
		m.triggers[c.Name] = m.newRunner(c, QueueFacts{}, "", nil)
	}
	return m, nil
}

// Start starts every enabled trigger. A trigger whose queue is gone or
// whose settings no longer fit the queue keeps retrying and reports why in
// its LastError.
func (m *Manager) Start() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.started = true
	for _, r := range m.triggers {
		if r.cfg.IsEnabled() {
			r.start(m.invokeCtx)
		}
	}
	m.log.Info("triggers started", "count", len(m.triggers))
}

// Close stops every trigger: polls end at once; invocations in flight may
// finish until ctx is done, and are then cancelled.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	m.closed = true
	rs := make([]*runner, 0, len(m.triggers))
	for _, r := range m.triggers {
		rs = append(rs, r)
		r.stopPolling()
	}
	m.mu.Unlock()
	done := make(chan struct{})
	go func() {
		for _, r := range rs {
			r.wait()
		}
		close(done)
	}()
	select {
	case <-done:
		m.cancelInvoke()
		return nil
	case <-ctx.Done():
		m.cancelInvoke()
		<-done
		return ctx.Err()
	}
}

// queueFacts asks the broker about the queue.
func (m *Manager) queueFacts(ctx context.Context, queue string) (QueueFacts, string, error) {
	info, err := m.o.Broker.GetQueue(ctx, queue)
	if err != nil {
		return QueueFacts{}, "", err
	}
	attrs, err := m.o.Broker.GetQueueAttributes(ctx, tidemq.GetQueueAttributesParams{Queue: queue, Names: []string{tidemq.AttrVisibilityTimeout}})
	if err != nil {
		return QueueFacts{}, "", err
	}
	vis, err := strconv.Atoi(attrs[tidemq.AttrVisibilityTimeout])
	if err != nil {
		return QueueFacts{}, "", fmt.Errorf("queue %s: bad VisibilityTimeout %q", queue, attrs[tidemq.AttrVisibilityTimeout])
	}
	return QueueFacts{FIFO: info.FIFO, VisibilityTimeout: time.Duration(vis) * time.Second}, info.ARN, nil
}

// check validates c against its queue and this manager's policy.
func (m *Manager) check(ctx context.Context, c *Config) (QueueFacts, string, []string, filters, error) {
	if len(c.Target.Command) > 0 && !m.o.AllowCommands {
		return QueueFacts{}, "", nil, nil, invalid("command targets are off on this server (tidemq serve --allow-trigger-commands)")
	}
	if c.Queue == "" {
		return QueueFacts{}, "", nil, nil, invalid("Queue is required")
	}
	facts, arn, err := m.queueFacts(ctx, c.Queue)
	if err != nil {
		return QueueFacts{}, "", nil, nil, err
	}
	warnings, err := c.Validate(facts)
	if err != nil {
		return QueueFacts{}, "", nil, nil, err
	}
	fs, err := compileFilters(c.FilterCriteria)
	if err != nil {
		return QueueFacts{}, "", nil, nil, invalid("%v", err)
	}
	return facts, arn, warnings, fs, nil
}

// Create adds a trigger and starts it when it is enabled.
func (m *Manager) Create(ctx context.Context, c Config) (*Status, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errors.New("trigger manager is closed")
	}
	if c.Name == "" {
		c.Name = uuid.NewString()
	}
	if _, ok := m.triggers[c.Name]; ok {
		return nil, &ExistsError{Name: c.Name}
	}
	cfg := c.clone()
	facts, arn, warnings, fs, err := m.check(ctx, cfg)
	if err != nil {
		return nil, err
	}
	r := m.newRunner(cfg, facts, arn, fs)
	r.warnings = warnings
	m.triggers[cfg.Name] = r
	if err := m.saveLocked(); err != nil {
		delete(m.triggers, cfg.Name)
		return nil, err
	}
	for _, w := range warnings {
		m.log.Warn("trigger created with a risky setting", "trigger", cfg.Name, "warning", w)
	}
	if m.started && cfg.IsEnabled() {
		r.start(m.invokeCtx)
	}
	return r.status(), nil
}

// Update merges patch (a JSON object of Config fields) into the named
// trigger's settings, validates the result and restarts the trigger. The
// name and the queue cannot change. Target.Headers, when given, replace
// the trigger's headers as a whole; a secret given as Redacted keeps its
// stored value (see keepSecrets).
func (m *Manager) Update(ctx context.Context, name string, patch []byte) (*Status, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.triggers[name]
	if !ok {
		return nil, &NotFoundError{Name: name}
	}
	cfg := old.cfg.clone()
	headersGiven, err := patchGivesHeaders(patch)
	if err != nil {
		return nil, invalid("the update is not a JSON object of trigger settings: %v", err)
	}
	if headersGiven {
		cfg.Target.Headers = nil // replaced as a whole, not merged
	}
	if err := json.Unmarshal(patch, cfg); err != nil {
		return nil, invalid("the update is not a JSON object of trigger settings: %v", err)
	}
	if err := cfg.Target.keepSecrets(&old.cfg.Target, headersGiven); err != nil {
		return nil, err
	}
	if cfg.Name != name {
		return nil, invalid("a trigger cannot be renamed")
	}
	if cfg.Queue != old.cfg.Queue {
		return nil, invalid("a trigger's queue cannot change: delete it and create another")
	}
	facts, arn, warnings, fs, err := m.check(ctx, cfg)
	if err != nil {
		return nil, err
	}
	r := m.newRunner(cfg, facts, arn, fs)
	r.warnings = warnings
	r.stats = old.stats // counters carry on across updates
	prev := m.triggers[name]
	m.triggers[name] = r
	if err := m.saveLocked(); err != nil {
		m.triggers[name] = prev
		return nil, err
	}
	old.stopPolling()
	old.wait()
	if m.started && !m.closed && cfg.IsEnabled() {
		r.start(m.invokeCtx)
	}
	return r.status(), nil
}

// patchGivesHeaders reports whether an update gives Target.Headers, which
// then replace the trigger's headers as a whole (a header left out is
// removed), rather than being merged into them.
func patchGivesHeaders(patch []byte) (bool, error) {
	var p struct {
		Target map[string]json.RawMessage `json:"Target"`
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		return false, err
	}
	for k := range p.Target {
		if strings.EqualFold(k, "Headers") { // as encoding/json matches names
			return true, nil
		}
	}
	return false, nil
}

// SetEnabled enables or disables a trigger.
func (m *Manager) SetEnabled(ctx context.Context, name string, on bool) (*Status, error) {
	return m.Update(ctx, name, []byte(fmt.Sprintf(`{"Enabled":%t}`, on)))
}

// Delete stops and removes a trigger. Invocations in flight finish first.
func (m *Manager) Delete(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.triggers[name]
	if !ok {
		return &NotFoundError{Name: name}
	}
	delete(m.triggers, name)
	if err := m.saveLocked(); err != nil {
		m.triggers[name] = r
		return err
	}
	r.stopPolling()
	r.wait()
	return nil
}

// Get returns one trigger's status.
func (m *Manager) Get(name string) (*Status, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.triggers[name]
	if !ok {
		return nil, &NotFoundError{Name: name}
	}
	return r.status(), nil
}

// List returns every trigger's status, by name.
func (m *Manager) List() []*Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Status, 0, len(m.triggers))
	for _, r := range m.triggers {
		out = append(out, r.status())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Stats returns every trigger's counters by trigger name, with the queue
// each one polls.
func (m *Manager) Stats() []TriggerStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]TriggerStats, 0, len(m.triggers))
	for _, r := range m.triggers {
		out = append(out, TriggerStats{Name: r.cfg.Name, Queue: r.cfg.Queue, Enabled: r.cfg.IsEnabled(), Stats: r.stats.snapshot()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// TriggerStats are one trigger's counters.
type TriggerStats struct {
	Name, Queue string
	Enabled     bool
	Stats
}

// file is the persisted form.
type file struct {
	Triggers []*Config `json:"Triggers"`
}

func (m *Manager) load() ([]*Config, error) {
	if m.o.Path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(m.o.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("trigger: %w", err)
	}
	m.tightenFileMode()
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("trigger: %s: %w", m.o.Path, err)
	}
	return f.Triggers, nil
}

// fileMode is the mode of the triggers file: it holds the targets'
// secrets, so only the server's user may read it.
const fileMode os.FileMode = 0o600

// tightenFileMode makes a triggers file that others may read (written by
// hand, or restored from a backup) fileMode, as every save would.
func (m *Manager) tightenFileMode() {
	fi, err := os.Stat(m.o.Path)
	if err != nil || fi.Mode().Perm()&^fileMode == 0 {
		return
	}
	if err := os.Chmod(m.o.Path, fileMode); err != nil {
		m.log.Warn("the triggers file holds secrets but others may read it", "path", m.o.Path, "mode", fi.Mode().Perm().String(), "err", err)
		return
	}
	m.log.Warn("the triggers file holds secrets: made it readable by the server's user only", "path", m.o.Path, "was", fi.Mode().Perm().String())
}

// saveLocked writes every trigger's settings, secrets included, to o.Path,
// atomically: a temporary file (fileMode), synced, renamed over the old
// one.
func (m *Manager) saveLocked() error {
	if m.o.Path == "" {
		return nil
	}
	var f file
	for _, r := range m.triggers {
		f.Triggers = append(f.Triggers, r.cfg)
	}
	sort.Slice(f.Triggers, func(i, j int) bool { return f.Triggers[i].Name < f.Triggers[j].Name })
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(m.o.Path), ".triggers-*.json")
	if err != nil {
		return fmt.Errorf("trigger: save: %w", err)
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600 already; this says it is wanted.
	if err := tmp.Chmod(fileMode); err != nil {
		tmp.Close()
		return fmt.Errorf("trigger: save: %w", err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("trigger: save: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("trigger: save: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("trigger: save: %w", err)
	}
	if err := os.Rename(tmp.Name(), m.o.Path); err != nil {
		return fmt.Errorf("trigger: save: %w", err)
	}
	return nil
}
