package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tidemq/tidemq"
)

// Options configure a Broker.
type Options struct {
	// DSN is the PostgreSQL connection string (postgres://user@host/db?...).
	// Ignored when Pool is set.
	DSN string
	// Pool, if set, is used instead of a pool opened from DSN; the Broker
	// does not close it.
	Pool *pgxpool.Pool
	// Clock is read for every deadline. Default: the system clock.
	Clock tidemq.Clock
	// Region and AccountID make up queue ARNs. Defaults: us-east-1 and
	// 000000000000.
	Region    string
	AccountID string
	// SweepInterval is how often (in real time) the node applies retention
	// to every queue, so that expired messages are dropped, counted and
	// logged even on queues nobody reads (every node sweeps; a sweep that
	// finds nothing due costs one index probe per queue). Default 10 s;
	// negative turns it off (tests that drive a fake clock).
	SweepInterval time.Duration
	// Inflight caps each queue's messages in flight; its zero value is
	// AWS's 120,000 (tidemq.InflightLimits; checkInflight, inflight.go).
	Inflight tidemq.InflightLimits
	// MaxQueueBytes, when positive, refuses sends to a queue whose
	// messages (body and attributes, as SQS counts a message's size) add
	// up to at least this many bytes, with RequestThrottled, which SDKs
	// retry with backoff (`tidemq serve --max-queue-bytes`), as the
	// embedded engine does. Receives, deletes and dead-letter moves go
	// on, so consumers drain the queue. The check is part of each send's
	// statement (queuebytes.go).
	MaxQueueBytes int64
	Logger        *slog.Logger
}

// DefaultMaxConns is how many connections a node opens at most, unless
// its DSN sets pool_max_conns: a receive or a FIFO send holds one for its
// statements, the group commit's writers (commit.go) one each.
const DefaultMaxConns = 20

// Broker is a tidemq.Broker on PostgreSQL. Several Brokers (nodes) may
// share one database; each is safe for concurrent use.
type Broker struct {
	// QueueCore implements the calls on a queue's record over the
	// broker's queueDriver (queuedriver.go).
	tidemq.QueueCore

	pool    *pgxpool.Pool
	ownPool bool
	clock   tidemq.Clock
	region  string
	acct    string
	log     *slog.Logger
	// planStats: when this node last analyzed messages (planstats.go).
	planStats planStats
	// handleKey seals receipt handles; it is in the database (meta), so
	// every node accepts every node's handles.
	handleKey []byte
	// channel is the LISTEN/NOTIFY channel of this schema.
	channel string

	waiters waiters
	// takes gathers the receives of a standard queue (takes.go).
	takes takes

	// stats and lastReceive are this node's counters since it started,
	// by queue id.
	statsMu     sync.Mutex
	stats       map[int64]*tidemq.QueueStats
	lastReceive map[int64]time.Time
	inflight    map[int64]inflightCheck
	fifoHeld    map[int64]heldRoom // fifoRoom's shares, inflight.go
	// inflightCaps is Options.Inflight; maxQueueBytes Options.MaxQueueBytes
	// (0: no limit).
	inflightCaps  tidemq.InflightLimits
	maxQueueBytes int64

	// listenErr is why the LISTEN connection is down (nil while it is
	// up): Healthy reports it, since long polls then miss other nodes'
	// sends until it is back.
	listenErr atomic.Pointer[errBox]

	closing  chan struct{}
	draining tidemq.Drainer
	closed   atomic.Bool
	wg       sync.WaitGroup
	tasksMu  sync.Mutex
	running  map[string]bool // move tasks this node runs

	group      groupCommit // commit.go
	announcer  announcer   // announce.go
	queueCache queueCache  // queuecache.go

	// candidatesRead counts the rows candidates returned (a test reads
	// it): a move of N messages reads O(N) of them, whatever stays.
	candidatesRead atomic.Int64
}

type errBox struct{ err error }

var _ tidemq.Broker = (*Broker)(nil)

// Open connects, brings the schema up to date and starts the broker: its
// LISTEN connection, and the move tasks left RUNNING.
func Open(ctx context.Context, o Options) (*Broker, error) {
	b := &Broker{
		pool: o.Pool, clock: o.Clock, region: o.Region, acct: o.AccountID, log: o.Logger,
		stats: map[int64]*tidemq.QueueStats{}, lastReceive: map[int64]time.Time{}, inflight: map[int64]inflightCheck{},
		fifoHeld: map[int64]heldRoom{}, closing: make(chan struct{}), running: map[string]bool{},
		inflightCaps: o.Inflight, maxQueueBytes: max(o.MaxQueueBytes, 0),
	}
	b.QueueCore = tidemq.NewQueueCore(queueDriver{b})
	b.waiters.byQueue = map[string]map[*waiter]struct{}{}
	b.announcer.kick = make(chan struct{}, 1)
	b.clock, b.region, b.acct, b.log = tidemq.BrokerDefaults(b.clock, b.region, b.acct, b.log)
	if b.pool == nil {
		cfg, err := PoolConfig(o.DSN)
		if err != nil {
			return nil, err
		}
		if !strings.Contains(o.DSN, "pool_max_conns") {
			// pgxpool's default (4 on a 2-core machine) would make 16
			// clients queue for a connection; the DSN's pool_max_conns
			// says otherwise.
			cfg.MaxConns = DefaultMaxConns
		}
		if b.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
			return nil, fmt.Errorf("postgres: %w", err)
		}
		b.ownPool = true
	}
	fail := func(err error) (*Broker, error) {
		if b.ownPool {
			b.pool.Close()
		}
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if err := migrate(ctx, b.pool); err != nil {
		return fail(err)
	}
	key, err := b.loadHandleKey(ctx)
	if err != nil {
		return fail(err)
	}
	b.handleKey = key
	var schema string
	if err := b.pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return fail(err)
	}
	b.channel = channelName(schema)
	l, err := b.listen(ctx)
	if err != nil {
		return fail(fmt.Errorf("LISTEN: %w", err))
	}
	b.checkSession(ctx, l) // pooler.go
	b.wg.Add(2)
	go b.listenLoop(l)
	go b.announceLoop()
	if err := b.resumeTasks(ctx); err != nil {
		b.Close()
		return nil, fmt.Errorf("postgres: resume move tasks: %w", err)
	}
	interval := o.SweepInterval
	if interval == 0 {
		interval = 10 * time.Second
	}
	if interval > 0 {
		b.wg.Add(1)
		go b.sweepLoop(interval)
	}
	return b, nil
}

var notIdent = regexp.MustCompile(`[^a-z0-9_]`)

// channelName is the NOTIFY channel of a schema: notifications are per
// database, so brokers on different schemas of one database must not hear
// each other.
func channelName(schema string) string {
	s := notIdent.ReplaceAllString(schema, "_")
	if len(s) > 40 {
		s = s[:40]
	}
	return "tidemq_wake_" + s
}

// loadHandleKey returns the receipt handle key, creating it on first use.
func (b *Broker) loadHandleKey(ctx context.Context) ([]byte, error) {
	var k [32]byte
	if _, err := rand.Read(k[:]); err != nil {
		return nil, err
	}
	if _, err := b.pool.Exec(ctx, `INSERT INTO meta (key, value) VALUES ('handle_key', $1) ON CONFLICT (key) DO NOTHING`, k[:]); err != nil {
		return nil, err
	}
	var key []byte
	err := b.pool.QueryRow(ctx, `SELECT value FROM meta WHERE key = 'handle_key'`).Scan(&key)
	return key, err
}

// Drain answers every waiting long poll (empty) and makes later receives
// return without waiting.
func (b *Broker) Drain() {
	b.draining.Drain()
}

// Close drains, stops the listener and the move tasks this node runs, and
// closes the pool if the Broker opened it.
func (b *Broker) Close() error {
	b.Drain()
	if b.closed.Swap(true) {
		return nil
	}
	close(b.closing)
	b.wg.Wait()
	// What the committers wrote while they drained, after the announcer's
	// last round.
	b.sendAnnouncements()
	if b.ownPool {
		b.pool.Close()
	}
	return nil
}

// Healthy reports nil while the database answers, the node's LISTEN
// connection is up and its schema is in place (schemacheck.go), or why
// not. After PostgreSQL restarts, the pool replaces its broken connections
// and the listener reconnects by itself; Healthy turns nil again once both
// have.
func (b *Broker) Healthy() error {
	if b.closed.Load() {
		return errors.New("broker closed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := b.pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres unreachable: %w", err)
	}
	if e := b.listenErr.Load(); e != nil {
		return fmt.Errorf("postgres: LISTEN connection down, reconnecting: %w", e.err)
	}
	return b.checkSchema(ctx) // schemacheck.go
}

// refusal is the error of a request to a closed broker.
func (b *Broker) refusal() error {
	if b.closed.Load() {
		return tidemq.ShuttingDown()
	}
	return nil
}

// inTx runs fn in a transaction, retrying it on a serialization failure or
// deadlock.
func (b *Broker) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return b.inTxOn(ctx, b.pool, fn)
}

// beginner is a pool or a connection taken from it.
type beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// inTxOn is inTx on db: a connection a request already holds runs its
// transactions on it rather than waiting for a second one.
func (b *Broker) inTxOn(ctx context.Context, db beginner, fn func(tx pgx.Tx) error) error {
	if err := b.refusal(); err != nil {
		return err
	}
	fn = fenced(ctx, fn) // a leader's write: refused once its lease was taken over (fence.go)
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		err = pgx.BeginFunc(ctx, db, fn)
		if !retryable(err) {
			break
		}
	}
	return b.failure(ctx, err)
}

// messageQueue returns the named queue for a message request (send,
// delete), from the node's cache when it is fresh (queuecache.go).
func (b *Broker) messageQueue(ctx context.Context, name string) (*queue, error) {
	if err := b.refusal(); err != nil {
		return nil, err
	}
	q, err := b.queueFor(ctx, nil, name)
	return q, b.failure(ctx, err)
}

// noteReceive records when q was last received from (Snapshot's
// LastReceive, this node's own).
func (b *Broker) noteReceive(qid int64, now time.Time) {
	b.statsMu.Lock()
	b.lastReceive[qid] = now
	b.statsMu.Unlock()
}

// failure is what a request answers for err: a leader's write refused by
// its fence as it is, a primary that cannot be reached as
// ServiceUnavailable (which the SDKs retry), anything else as it is. It
// logs what is not a catalogue error: the transports answer
// InternalFailure without the cause.
func (b *Broker) failure(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var te *tidemq.Error
	if errors.Is(err, tidemq.ErrFenced) {
		b.log.Warn("postgres: a leader's write refused", "err", err)
		return err
	}
	if err != nil && ctx.Err() == nil && unavailable(err) {
		b.log.Warn("postgres: the primary cannot be reached", "err", err)
		return tidemq.Errorf(tidemq.ErrServiceUnavailable, "The queue's database cannot be reached; try again.")
	}
	if err != nil && !errors.As(err, &te) && ctx.Err() == nil {
		b.log.Error("postgres: request failed", "err", err)
	}
	return err
}

// arn returns the ARN of the named queue. A queue of another region than
// the broker's own is named "<region>/<name>" (tidemq.RegionalQueueName);
// its ARN carries that region and the plain name.
func (b *Broker) arn(name string) string { return tidemq.RegionalQueueARN(b.region, b.acct, name) }

// canonical writes the broker's own region out of a queue name
// ("us-east-1/orders" is "orders" in us-east-1): a queue's row has one name.
func (b *Broker) canonical(name string) string { return tidemq.CanonicalQueueName(name, b.region) }

// nameOfARN returns the queue name an ARN (of any region) of this broker's
// account names, or "".
func (b *Broker) nameOfARN(arn string) string {
	name, _ := tidemq.QueueNameOfARN(arn, b.region, b.acct)
	return name
}

// stat runs fn on a queue's counters.
func (b *Broker) stat(qid int64, fn func(s *tidemq.QueueStats)) {
	b.statsMu.Lock()
	s := b.stats[qid]
	if s == nil {
		s = &tidemq.QueueStats{}
		b.stats[qid] = s
	}
	fn(s)
	b.statsMu.Unlock()
}

func stampOf(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// timeOf returns an instant kept as nanoseconds since the Unix epoch (0
// for never; a column's int64 or a record's tidemq.Stamp) as a time.Time.
func timeOf[S ~int64](n S) time.Time { return tidemq.Stamp(n).Time() }

// closingContext returns a context of parent's that also ends when the
// broker begins to close, for the work of its background loops.
func (b *Broker) closingContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	go func() {
		select {
		case <-b.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// sweepLoop applies retention to every queue periodically until the
// broker closes.
func (b *Broker) sweepLoop(interval time.Duration) {
	defer b.wg.Done()
	tidemq.Every(interval, b.closing, func() {
		// A sweep may take longer than a short interval on a busy
		// database (the ticks it misses are dropped, so sweeps never pile
		// up); Close cuts it short.
		ctx, cancel := b.closingContext(context.Background())
		defer cancel()
		ctx, cancelTimeout := context.WithTimeout(ctx, max(interval, minSweepTime))
		defer cancelTimeout()
		if err := b.Sweep(ctx); err != nil && !b.closed.Load() {
			b.log.Warn("postgres: sweep failed", "err", err)
		}
	})
}

// minSweepTime bounds a periodic sweep from below: its deadline is its
// interval, or this when the interval is shorter.
const minSweepTime = 30 * time.Second

// Sweep drops (or captures) the expired messages of every queue, and
// forgets the deduplication entries and receive attempts that ran out;
// then it analyzes messages if it outgrew the planner's statistics
// (planstats.go).
func (b *Broker) Sweep(ctx context.Context) error {
	err := b.inTx(ctx, func(tx pgx.Tx) error {
		qs, err := b.allQueues(ctx, tx)
		if err != nil {
			return err
		}
		return b.expireAll(ctx, tx, qs, b.clock.Now())
	})
	if err != nil {
		return err
	}
	if _, err := b.refreshPlanStats(ctx); err != nil && ctx.Err() == nil && !b.closed.Load() {
		b.log.Warn("postgres: could not analyze messages for the planner", "err", err)
	}
	return nil
}
