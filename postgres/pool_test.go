package postgres_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/internal/pgtest"
	"github.com/tidemq/tidemq/postgres"
)

// The pool's defaults: a session idle in a transaction is ended by the
// server (a frozen node releases its locks), a host that does not answer
// is given up on; a DSN's own settings win.
func TestPoolConfigDefaults(t *testing.T) {
	cfg, err := postgres.PoolConfig("postgres://u@h1:5432,h2:5433/db?target_session_attrs=read-write")
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"]; got != "2000" {
		t.Errorf("idle_in_transaction_session_timeout = %q, want 2000 (ms)", got)
	}
	if got := cfg.ConnConfig.RuntimeParams["jit"]; got != "off" {
		t.Errorf("jit = %q, want off", got)
	}
	if cfg.ConnConfig.ConnectTimeout != postgres.DefaultConnectTimeout {
		t.Errorf("ConnectTimeout = %v", cfg.ConnConfig.ConnectTimeout)
	}
	second := false
	for _, fb := range cfg.ConnConfig.Fallbacks {
		second = second || (fb.Host == "h2" && fb.Port == 5433)
	}
	if !second {
		t.Errorf("the second host is not a fallback: %+v", cfg.ConnConfig.Fallbacks)
	}
	cfg, err = postgres.PoolConfig("postgres://u@h/db?idle_in_transaction_session_timeout=60000&connect_timeout=2&jit=on")
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"]; got != "60000" || cfg.ConnConfig.ConnectTimeout != 2*time.Second {
		t.Errorf("the DSN's settings were replaced: %q, %v", got, cfg.ConnConfig.ConnectTimeout)
	}
	if got := cfg.ConnConfig.RuntimeParams["jit"]; got != "on" {
		t.Errorf("the DSN's jit was replaced: %q", got)
	}
}

// proxy forwards TCP connections to target until Close, which also cuts
// every connection: the database gone, as a broker sees it.
type proxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(s, c); s.Close() }()
			go func() { _, _ = io.Copy(c, s); c.Close() }()
		}
	}()
	t.Cleanup(p.Close)
	return p
}

func (p *proxy) Close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

// When the database cannot be reached, a request fails at once with
// ServiceUnavailable (which the SDKs retry), not InternalFailure, and
// does not hang.
func TestUnreachableDatabaseIsServiceUnavailable(t *testing.T) {
	dsn, _ := pgtest.Schema(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, u.Host)
	u.Host = p.ln.Addr().String()
	ctx := context.Background()
	b, err := postgres.Open(ctx, postgres.Options{DSN: u.String(), SweepInterval: -1, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	send := func() error {
		_, err := b.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{ID: "1", Body: "x"}}})
		return err
	}
	if err := send(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	began := time.Now()
	err = send()
	var te *tidemq.Error
	if !errors.As(err, &te) || te.Code != tidemq.ErrServiceUnavailable {
		t.Fatalf("send with the database gone: %v, want ServiceUnavailable", err)
	}
	if d := time.Since(began); d > postgres.DefaultConnectTimeout+5*time.Second {
		t.Errorf("the send failed after %v", d)
	}
}

// A DSN asking for a query mode that types parameters from their Go types
// alone is refused with a clear error; the modes that describe statements
// are accepted.
func TestPoolConfigQueryExecModes(t *testing.T) {
	for _, mode := range []string{"exec", "simple_protocol"} {
		_, err := postgres.PoolConfig("postgres://u@h/db?default_query_exec_mode=" + mode)
		if err == nil || !strings.Contains(err.Error(), "default_query_exec_mode="+mode+" is not supported") {
			t.Errorf("%s: %v, want it refused", mode, err)
		}
	}
	for _, mode := range []string{"cache_statement", "cache_describe", "describe_exec"} {
		if _, err := postgres.PoolConfig("postgres://u@h/db?default_query_exec_mode=" + mode); err != nil {
			t.Errorf("%s: %v", mode, err)
		}
	}
}

// The other modes that describe statements carry every kind of write:
// queues, sends with attributes, receives and deletes, standard and FIFO.
func TestDescribingQueryExecModesWork(t *testing.T) {
	for _, mode := range []string{"cache_describe", "describe_exec"} {
		t.Run(mode, func(t *testing.T) {
			dsn, _ := pgtest.Schema(t)
			b, err := postgres.Open(context.Background(), postgres.Options{DSN: dsn + "&default_query_exec_mode=" + mode, SweepInterval: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			ctx := context.Background()
			for _, name := range []string{"q", "f.fifo"} {
				var attrs map[string]string
				if name == "f.fifo" {
					attrs = map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"}
				}
				if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: name, Attributes: attrs}); err != nil {
					t.Fatal(err)
				}
				for i := 0; i < 3; i++ {
					entry := tidemq.SendEntry{ID: "0", Body: "body" + strconv.Itoa(i), MessageGroupID: "g",
						Attributes: map[string]tidemq.MessageAttributeValue{"a": {DataType: "String", StringValue: "v"}}}
					if _, err := b.SendMessages(ctx, tidemq.SendMessagesParams{Queue: name, Entries: []tidemq.SendEntry{entry}}); err != nil {
						t.Fatalf("send to %s: %v", name, err)
					}
				}
				ten := 10
				ms, err := b.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: name, MaxNumberOfMessages: &ten, WaitTimeSeconds: new(int)})
				if err != nil || len(ms) != 3 || ms[0].Attributes["a"].StringValue != "v" {
					t.Fatalf("receive from %s: %d messages, %v", name, len(ms), err)
				}
				res, err := b.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: name, Batch: true,
					Entries: []tidemq.DeleteEntry{{ID: "0", ReceiptHandle: ms[0].ReceiptHandle}}})
				if err != nil || res[0] != nil {
					t.Fatalf("delete from %s: %v %v", name, err, res)
				}
			}
		})
	}
}
