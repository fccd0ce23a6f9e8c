package trigger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
)

// Options configure a Manager.
type Options struct {
	// Broker is the broker whose queues are polled. Required.
	Broker tidemq.Broker
	// Store keeps the triggers' settings, the secrets of their targets
	// included, under the keys beginning with Namespace, and nothing else
	// of it is touched: `tidemq serve` gives a share of the one store it
	// shares with the engine. nil means a store in memory. The manager owns
	// it from NewManager on: Close (or a failed NewManager) closes it.
	Store storage.Store
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

	// HomeRegion is the broker's home region, and RequestRegion (optional)
	// tells the region an admin request is for (its SigV4 credential
	// scope; "" for none). With both, a trigger created or updated through
	// Handler for another region's queue polls that region's queue, named
	// "<region>/<name>" as tidemq.RegionalQueueName does: the same name
	// means the same queue to a client's SQS calls and to its triggers.
	HomeRegion    string
	RequestRegion func(*http.Request) string

	// Several nodes on one shared Store (cluster.go). Follow: Start runs
	// no trigger; they run inside Lead, on the one node holding the lease.
	Follow bool
	// Reload, when positive, reloads the triggers from the Store that
	// often, so that other nodes' changes are seen (and, on the node that
	// leads, run) within it.
	Reload time.Duration
	// NodeID, with several nodes, names this node: its counters are then
	// shared with the others' (sharedstats.go).
	NodeID string
}

// Manager owns the triggers of one broker: it validates, persists, starts
// and stops them. It is safe for concurrent use.
//
// Durable before acknowledged: a Create, Update or Delete is written to the
// Registry, which returns once it is durable, before it changes what the
// manager runs and answers; one that fails changes nothing.
//
// Lock order: Manager.mu, then runner.mu. Manager.mu is held across broker
// calls made to validate a trigger and while a replaced trigger stops (at
// most its function timeout).
type Manager struct {
	o   Options
	log *slog.Logger

	// reg keeps the triggers durably, in o.Store; it is written under mu,
	// before the change is made in triggers.
	reg      Registry
	kv       storage.Store // o.Store's Namespace: the counters' shares
	mu       sync.Mutex
	triggers map[string]*runner
	started  bool
	leading  bool // the triggers run here: Start without Follow, or inside Lead
	closed   bool
	stop     chan struct{} // closed by Close: ends reloadLoop
	// invalidated asks reloadLoop to reload now (Invalidate).
	invalidated chan struct{}

	// invokeCtx is cancelled only when Close gives up waiting: stopping a
	// trigger ends its polls at once but lets invocations finish.
	invokeCtx    context.Context
	cancelInvoke context.CancelFunc

	closeStore sync.Once
	storeErr   error
}

// NotFoundError names a trigger that does not exist.
type NotFoundError struct{ Name string }

func (e *NotFoundError) Error() string { return fmt.Sprintf("no trigger named %q", e.Name) }

// ExistsError names a trigger that exists already.
type ExistsError struct{ Name string }

func (e *ExistsError) Error() string { return fmt.Sprintf("a trigger named %q exists already", e.Name) }

// NewManager loads the triggers kept in o.Store. They start with Start.
func NewManager(o Options) (*Manager, error) {
	if o.Broker == nil {
		if o.Store != nil {
			o.Store.Close()
		}
		return nil, errors.New("trigger: Options.Broker is required")
	}
	if o.Store == nil {
		o.Store = mem.New()
	}
	if o.WaitTimeSeconds == 0 {
		o.WaitTimeSeconds = tidemq.MaxWaitTimeSeconds
	}
	if o.HTTPClient == nil {
		// Redirects are not followed, as Lambda's invoke has none: a target
		// that redirects would take the batch and the target's headers
		// (secrets) to a host they were not given for. A 3xx is a
		// function error.
		o.HTTPClient = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	reg := newKVRegistry(o.Store)
	m := &Manager{o: o, log: o.Logger, reg: reg, kv: reg.kv, triggers: make(map[string]*runner), stop: make(chan struct{}),
		invalidated: make(chan struct{}, 1)}
	m.invokeCtx, m.cancelInvoke = context.WithCancel(context.Background())
	cfgs, err := m.reg.LoadTriggers()
	if err != nil {
		m.cancelInvoke()
		o.Store.Close()
		return nil, fmt.Errorf("trigger: load the triggers: %w", err)
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
	if m.o.Reload > 0 {
		go m.reloadLoop()
	}
	if m.o.NodeID != "" {
		go m.statsLoop()
	}
	if m.o.Follow {
		return // Lead starts them
	}
	m.leading = true
	m.startAllLocked()
}

// startAllLocked starts every enabled trigger. Called with mu held.
func (m *Manager) startAllLocked() {
	for _, r := range m.triggers {
		m.startLocked(r)
	}
	m.log.Info("triggers started", "count", len(m.triggers))
}

// startLocked starts r if it is enabled and allowed. Called with mu held.
func (m *Manager) startLocked(r *runner) {
	if !r.cfg.IsEnabled() {
		return
	}
	// A command trigger saved while commands were allowed does not
	// outlive the flag: the server's operator decides at each start.
	if r.cfg.Target.runsLocalCode() && !m.o.AllowCommands {
		r.setFailing(errCommandsOff)
		m.log.Warn("trigger not started: it runs a command or a function, and command targets are off", "trigger", r.cfg.Name)
		return
	}
	r.start(m.invokeCtx)
}

// Close stops every trigger: polls end at once; invocations in flight may
// finish until ctx is done, and are then cancelled. It then closes the
// store. A second Close does nothing more.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	if !m.closed {
		close(m.stop)
	}
	m.closed = true
	m.leading = false
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
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		m.cancelInvoke()
		<-done
		err = ctx.Err()
	}
	m.cancelInvoke()
	// No write can follow: every change checks closed under mu.
	m.closeStore.Do(func() { m.storeErr = m.o.Store.Close() })
	if err == nil {
		err = m.storeErr
	}
	return err
}

// errCommandsOff says why a command or function trigger is refused or not
// started.
const errCommandsOff = "command and function targets are off on this server: they run code on it (tidemq serve --allow-trigger-commands)"

// errClosed refuses a change after Close.
var errClosed = errors.New("trigger manager is closed")

// queueFacts asks the broker about the queue.
func (m *Manager) queueFacts(ctx context.Context, queue string) (QueueFacts, string, error) {
	info, err := m.o.Broker.GetQueue(ctx, tidemq.GetQueueParams{Name: queue})
	if tidemq.HasCode(err, tidemq.ErrQueueDoesNotExist) {
		return QueueFacts{}, "", tidemq.Errorf(tidemq.ErrQueueDoesNotExist,
			"The queue %s does not exist: create it first (aws sqs create-queue --queue-name %s), or check the name and --region.", queue, queue)
	}
	if err != nil {
		return QueueFacts{}, "", err
	}
	vis, err := m.visibilityTimeout(ctx, queue)
	if err != nil {
		return QueueFacts{}, "", err
	}
	return QueueFacts{FIFO: info.FIFO, VisibilityTimeout: time.Duration(vis) * time.Second}, info.ARN, nil
}

// check validates c against its queue and this manager's policy.
func (m *Manager) check(ctx context.Context, c *Config) (QueueFacts, string, []string, filters, error) {
	if c.Target.runsLocalCode() && !m.o.AllowCommands {
		return QueueFacts{}, "", nil, nil, invalid("%s", errCommandsOff)
	}
	if c.Queue == "" {
		return QueueFacts{}, "", nil, nil, invalid("Queue is required")
	}
	facts, arn, err := m.queueFacts(ctx, c.Queue)
	if err != nil {
		return QueueFacts{}, "", nil, nil, err
	}
	warnings, err := c.Validate(facts)
	var ve *VisibilityError
	if errors.As(err, &ve) && !c.IsEnabled() {
		// A disabled trigger receives nothing, so it cannot process a
		// message twice: it can be saved (disabled, say, because its
		// queue's visibility timeout was lowered under it), and is checked
		// again when it is enabled.
		warnings, err = []string{ve.Error() + "; enabling the trigger is refused until it is"}, nil
	}
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
		return nil, errClosed
	}
	if c.Name == "" {
		c.Name = uuid.NewString()
	}
	cfg := c.clone()
	facts, arn, warnings, fs, err := m.check(ctx, cfg)
	if err != nil {
		return nil, err
	}
	err = m.reg.UpdateTrigger(cfg.Name, func(cur *Config) (*Config, error) {
		if cur != nil { // created on another node
			return nil, &ExistsError{Name: cfg.Name}
		}
		return cfg, nil
	})
	if err != nil {
		return nil, err
	}
	m.dropLocked(cfg.Name) // one this node had not yet seen deleted
	r := m.newRunner(cfg, facts, arn, fs)
	r.warnings = warnings
	m.triggers[cfg.Name] = r
	for _, w := range warnings {
		m.log.Warn("trigger created with a risky setting", "trigger", cfg.Name, "warning", w)
	}
	if m.leading && cfg.IsEnabled() {
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
	if m.closed {
		return nil, errClosed
	}
	// The patch applies to the trigger as stored, not as this node last
	// loaded it: another node may have changed or deleted it.
	var cfg *Config
	var facts QueueFacts
	var arn string
	var warnings []string
	var fs filters
	err := m.reg.UpdateTrigger(name, func(cur *Config) (*Config, error) {
		if cur == nil {
			return nil, &NotFoundError{Name: name}
		}
		var err error
		cfg, err = patchConfig(cur, name, patch)
		if err != nil {
			return nil, err
		}
		facts, arn, warnings, fs, err = m.check(ctx, cfg)
		return cfg, err
	})
	var nf *NotFoundError
	if errors.As(err, &nf) {
		m.dropLocked(name) // deleted on another node
	}
	if err != nil {
		return nil, err
	}
	old, ok := m.triggers[name]
	if !ok { // created on another node, not loaded here yet
		old = m.newRunner(cfg, QueueFacts{}, "", nil)
	}
	r := m.newRunner(cfg, facts, arn, fs)
	r.warnings = warnings
	r.stats = old.stats // counters carry on across updates
	m.triggers[name] = r
	old.stopPolling()
	old.wait()
	if m.leading && cfg.IsEnabled() {
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
	if m.closed {
		return errClosed
	}
	err := m.reg.UpdateTrigger(name, func(cur *Config) (*Config, error) {
		if cur == nil {
			return nil, &NotFoundError{Name: name}
		}
		return nil, nil
	})
	var nf *NotFoundError
	if err != nil && !errors.As(err, &nf) {
		return err
	}
	m.dropLocked(name)
	return err
}

// dropLocked stops and forgets a trigger the registry no longer has.
// Called with mu held.
func (m *Manager) dropLocked(name string) {
	if r, ok := m.triggers[name]; ok {
		delete(m.triggers, name)
		r.stopPolling()
		r.wait()
	}
}

// patchConfig returns cur with patch merged in (see Update).
func patchConfig(cur *Config, name string, patch []byte) (*Config, error) {
	cfg := cur.clone()
	headersGiven, err := patchGivesHeaders(patch)
	if err != nil {
		return nil, invalid("the update is not a JSON object of trigger settings: %v", err)
	}
	if headersGiven {
		cfg.Target.Headers = nil // replaced as a whole, not merged
	}
	functionGiven, err := patchGivesFunction(patch)
	if err != nil {
		return nil, invalid("the update is not a JSON object of trigger settings: %v", err)
	}
	if functionGiven {
		cfg.Target.Function = nil // replaced as a whole, not merged
	}
	if err := json.Unmarshal(patch, cfg); err != nil {
		return nil, invalid("the update is not a JSON object of trigger settings: %v", err)
	}
	if err := cfg.Target.keepSecrets(&cur.Target, headersGiven); err != nil {
		return nil, err
	}
	if err := cfg.Target.keepEnvironment(&cur.Target); err != nil {
		return nil, err
	}
	if cfg.Name != name {
		return nil, invalid("a trigger cannot be renamed")
	}
	if cfg.Queue != cur.Queue {
		return nil, invalid("a trigger's queue cannot change: delete it and create another")
	}
	return cfg, nil
}

// Get returns one trigger's status.
func (m *Manager) Get(name string) (*Status, error) {
	m.mu.Lock()
	r, ok := m.triggers[name]
	if !ok {
		m.mu.Unlock()
		return nil, &NotFoundError{Name: name}
	}
	s := r.status()
	m.mu.Unlock()
	m.sharedStatus(s)
	return s, nil
}

// List returns every trigger's status, by name.
func (m *Manager) List() []*Status {
	m.mu.Lock()
	out := make([]*Status, 0, len(m.triggers))
	for _, r := range m.triggers {
		out = append(out, r.status())
	}
	m.mu.Unlock()
	for _, s := range out {
		m.sharedStatus(s)
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
		out = append(out, TriggerStats{Name: r.cfg.Name, Queue: r.cfg.Queue, Enabled: r.cfg.IsEnabled(), State: r.state(),
			Stats: r.stats.snapshot(), Durations: r.stats.calls.durations()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// TriggerStats are one trigger's state and counters.
type TriggerStats struct {
	Name, Queue string
	Enabled     bool
	State       string // one of States
	Stats
	// Durations are the invocation durations by outcome (one of
	// Outcomes), for the outcomes that happened.
	Durations map[string]Histogram
}
