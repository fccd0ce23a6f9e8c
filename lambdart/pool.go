package lambdart

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

//go:embed bootstrap.py
var pythonBootstrap []byte

const pythonBootstrapName = "tidemq_lambda_bootstrap.py"

// stopGrace is how long a process has to exit after SIGTERM when the Pool
// closes.
const stopGrace = 500 * time.Millisecond

// Pool runs invocations of one function on up to Size processes, one
// invocation per process at a time. It is safe for concurrent use.
type Pool struct {
	f          Function
	log        *slog.Logger
	runtimeDir string
	// slots holds the idle slots; an invocation takes one and gives it
	// back. A slot's process is nil until an invocation starts it.
	slots chan *slot

	mu     sync.Mutex
	closed bool
	all    []*slot
}

type slot struct{ p *process }

// Options configure a Pool.
type Options struct {
	// Size is the most processes, and so concurrent invocations; 0 is 1.
	Size int
	// Logger receives the functions' output and the pool's events.
	Logger *slog.Logger
}

// NewPool checks f (see Function.Check) and returns a Pool that runs it.
// No process starts before the first invocation.
func NewPool(f Function, o Options) (*Pool, error) {
	if err := f.Check(); err != nil {
		return nil, err
	}
	f.Environment = cloneMap(f.Environment)
	if o.Size <= 0 {
		o.Size = 1
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	p := &Pool{f: f, log: o.Logger.With("function", f.Name), slots: make(chan *slot, o.Size)}
	dir, err := os.MkdirTemp("", "tidemq-lambda-")
	if err != nil {
		return nil, fmt.Errorf("lambda runtime directory: %w", err)
	}
	p.runtimeDir = dir
	if IsPython(f.Runtime) {
		if err := os.WriteFile(filepath.Join(dir, pythonBootstrapName), pythonBootstrap, 0o600); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("write the Python bootstrap: %w", err)
		}
	}
	for range o.Size {
		s := &slot{}
		p.all = append(p.all, s)
		p.slots <- s
	}
	return p, nil
}

// ErrClosed is the error of an invocation of a closed Pool.
var ErrClosed = errors.New("lambdart: the function's pool is closed")

// Invoke runs the function with payload (a JSON event) and returns its
// response. The function's deadline is ctx's (or now plus the function's
// Timeout); when it passes, the process is killed and a *TimeoutError
// returned. A *FunctionError is an error the function reported, its
// runtime's init error, or its exit (the process is then started again
// for the next invocation).
func (p *Pool) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	var s *slot
	select {
	case s = <-p.slots:
	case <-ctx.Done():
		return nil, ctxError(ctx, p.f.Timeout)
	}
	defer func() { p.slots <- s }()
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	// Without a deadline, the function's Timeout is the invocation's,
	// from now on (waiting for a process does not count).
	if _, ok := ctx.Deadline(); !ok && p.f.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.f.Timeout)
		defer cancel()
	}
	var resp []byte
	var err error
	for attempt := 0; ; attempt++ {
		if s.p != nil && !s.p.alive() {
			s.p.stop(0)
			s.p = nil
		}
		fresh := s.p == nil
		if fresh {
			proc, err := startProcess(&p.f, p.runtimeDir, p.log)
			if err != nil {
				return nil, err
			}
			s.p = proc
		}
		resp, err = s.p.run(ctx, payload, p.f.Timeout)
		// A warm process that exited between two invocations (after a
		// Go handler's panic, say) never saw this one: run it on a new
		// process, as Lambda would on a new environment.
		if u := (*undelivered)(nil); errors.As(err, &u) && !fresh && attempt == 0 {
			continue
		}
		break
	}
	var fe *FunctionError
	if err != nil && (!errors.As(err, &fe) || !s.p.alive()) {
		// A timeout, a cancellation, an init error or an exit: this
		// process is done with; the next invocation starts another.
		if errors.As(err, new(*TimeoutError)) {
			p.log.Warn("function timed out: its process is killed", "after", p.f.Timeout)
		}
		s.p.stop(0)
		s.p = nil
	}
	return resp, err
}

// Close stops every process (SIGTERM, then SIGKILL) and removes the
// pool's files. It waits for invocations in flight to end: cancel them
// first.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	n := len(p.all)
	p.mu.Unlock()
	var wg sync.WaitGroup
	for range n {
		s := <-p.slots
		if s.p != nil {
			wg.Add(1)
			go func(pr *process) {
				defer wg.Done()
				pr.stop(stopGrace)
			}(s.p)
			s.p = nil
		}
		defer func() { p.slots <- s }()
	}
	wg.Wait()
	return os.RemoveAll(p.runtimeDir)
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
