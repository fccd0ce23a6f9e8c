package lambdart

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// process is one running runtime of a function (Lambda's execution
// environment) and the Runtime API it talks to. It runs one invocation at
// a time: run is called by whoever holds the process's slot in the Pool.
//
// Lock order: mu only; no lock is held while a channel is waited on.
type process struct {
	f        *Function
	log      *slog.Logger
	srv      *http.Server
	cmd      *exec.Cmd
	output   *outputLog
	marker   string           // this runtime's instanceEnv value (tree_linux.go)
	offer    chan *invocation // an invocation waiting for GET /next
	stopping chan struct{}    // closed by stop: GET /next gives up
	exited   chan struct{}    // closed once the process has ended
	exitErr  error            // how it ended, set before exited is closed
	// initFailed is closed when the runtime reports an init error.
	initFailed chan struct{}

	mu       sync.Mutex
	current  *invocation // handed to the runtime, not yet answered
	started  bool        // the runtime has asked for an invocation
	initErr  *FunctionError
	stopOnce sync.Once
}

// invocation is one event handed to a runtime.
type invocation struct {
	id       string
	payload  []byte
	deadline time.Time
	traceID  string
	done     chan answer // buffered: the API never blocks on it
}

type answer struct {
	payload []byte
	err     *FunctionError
}

func (inv *invocation) answer(payload []byte, err *FunctionError) {
	select {
	case inv.done <- answer{payload, err}:
	default: // answered already
	}
}

// passEnv are the variables of the server's environment a function sees:
// what programs need to run (PATH, HOME, the locale, certificates) and
// the AWS credentials and endpoints, which on Lambda come from the
// function's role and which a handler needs to call the SDK (at tidemq,
// say).
var passEnv = []string{
	"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SSL_CERT_FILE", "SSL_CERT_DIR",
	"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
	"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_SQS", "AWS_ENDPOINT_URL_SNS",
}

// environ is the environment of a process of f whose Runtime API is at
// addr: Lambda's variables, then the function's.
func (f *Function) environ(addr, runtimeDir string) []string {
	var env []string
	for _, k := range passEnv {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	stream := fmt.Sprintf("%s/[$LATEST]%s", time.Now().UTC().Format("2006/01/02"), randomHex(16))
	env = append(env,
		"AWS_LAMBDA_RUNTIME_API="+addr,
		"_HANDLER="+f.Handler,
		"AWS_LAMBDA_FUNCTION_NAME="+f.Name,
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE="+strconv.Itoa(f.memory()),
		"AWS_LAMBDA_FUNCTION_TIMEOUT="+strconv.Itoa(int((f.Timeout+time.Second-1)/time.Second)),
		"AWS_LAMBDA_INITIALIZATION_TYPE=on-demand",
		"AWS_LAMBDA_LOG_GROUP_NAME=/aws/lambda/"+f.Name,
		"AWS_LAMBDA_LOG_STREAM_NAME="+stream,
		"AWS_EXECUTION_ENV=AWS_Lambda_"+f.Runtime,
		"AWS_REGION="+f.Region,
		"AWS_DEFAULT_REGION="+f.Region,
		"LAMBDA_TASK_ROOT="+f.CodeDir,
		"LAMBDA_RUNTIME_DIR="+runtimeDir,
		"TZ=:UTC",
	)
	if IsPython(f.Runtime) {
		// Lambda's task root is read-only: no __pycache__ is written
		// into the function's code directory.
		env = append(env, "PYTHONUNBUFFERED=1", "PYTHONDONTWRITEBYTECODE=1", "PYTHONPATH="+f.CodeDir)
	}
	keys := make([]string, 0, len(f.Environment))
	for k := range f.Environment {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		env = append(env, k+"="+f.Environment[k])
	}
	return env
}

// entrypoint is the program that starts f's runtime and its arguments.
func (f *Function) entrypoint(runtimeDir string) (string, []string, error) {
	switch {
	case IsPython(f.Runtime):
		py, err := python(f.Runtime)
		if err != nil {
			return "", nil, err
		}
		return py, []string{filepath.Join(runtimeDir, pythonBootstrapName)}, nil
	case f.Runtime == "go1.x":
		return filepath.Join(f.CodeDir, f.Handler), nil, nil
	default:
		return filepath.Join(f.CodeDir, "bootstrap"), nil, nil
	}
}

// startProcess starts a runtime of f with a Runtime API of its own.
func startProcess(f *Function, runtimeDir string, log *slog.Logger) (*process, error) {
	prog, args, err := f.entrypoint(runtimeDir)
	if err != nil {
		return nil, &FunctionError{Type: "Runtime.InvalidEntrypoint", Message: err.Error(), Init: true}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the Runtime API: %w", err)
	}
	p := &process{f: f, log: log, offer: make(chan *invocation), stopping: make(chan struct{}),
		exited: make(chan struct{}), initFailed: make(chan struct{})}
	p.srv = &http.Server{Handler: p.routes(), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	go p.srv.Serve(&ownerListener{Listener: ln, log: log})
	p.output = &outputLog{log: log}
	cmd := exec.Command(prog, args...)
	cmd.Dir = f.CodeDir
	p.marker = randomHex(16)
	cmd.Env = append(f.environ(ln.Addr().String(), runtimeDir), instanceEnv+"="+p.marker)
	cmd.Stdout, cmd.Stderr = p.output, p.output
	cmd.WaitDelay = time.Second // a child that keeps the pipes open
	processGroup(cmd)
	if err := cmd.Start(); err != nil {
		p.srv.Close()
		return nil, &FunctionError{Type: "Runtime.InvalidEntrypoint", Message: err.Error(), Init: true}
	}
	p.cmd = cmd
	log.Debug("function process started", "pid", cmd.Process.Pid, "runtime_api", ln.Addr().String())
	go func() {
		err := cmd.Wait()
		// What it started outlives it when it left the process group
		// (setsid): killed with it, whichever way it ended.
		if n := killTree(cmd.Process.Pid, p.marker); n > 0 {
			log.Warn("killed what the function's runtime left running", "processes", n)
		}
		p.output.flush()
		p.exitErr = err
		close(p.exited)
		p.srv.Close()
	}()
	return p, nil
}

// alive reports whether the process runs and may take an invocation.
func (p *process) alive() bool {
	select {
	case <-p.exited:
		return false
	case <-p.initFailed:
		return false
	default:
		return true
	}
}

// run invokes the function with payload. A nil error is a response; a
// *FunctionError is the function's error, an init error or the process's
// exit; a *TimeoutError is the deadline passing. After anything but a
// response or a function error reported through the API, the process is
// dead or must be killed (see healthy).
func (p *process) run(ctx context.Context, payload []byte, timeout time.Duration) ([]byte, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(timeout)
	}
	inv := &invocation{id: uuid.NewString(), payload: payload, deadline: deadline, traceID: traceID(), done: make(chan answer, 1)}
	select {
	case p.offer <- inv:
	case <-p.exited:
		return nil, &undelivered{p.failure()}
	case <-p.initFailed:
		return nil, p.failure()
	case <-ctx.Done():
		return nil, ctxError(ctx, timeout)
	}
	select {
	case a := <-inv.done:
		return a.payload, errOrNil(a.err)
	case <-p.exited:
		select { // an answer just before the exit (a Go panic reports, then exits)
		case a := <-inv.done:
			return a.payload, errOrNil(a.err)
		default:
		}
		return nil, p.failure()
	case <-ctx.Done():
		return nil, ctxError(ctx, timeout)
	}
}

// undelivered is the exit of a process before it took the invocation.
type undelivered struct{ err error }

func (u *undelivered) Error() string { return u.err.Error() }
func (u *undelivered) Unwrap() error { return u.err }

func errOrNil(fe *FunctionError) error {
	if fe == nil {
		return nil
	}
	return fe
}

func ctxError(ctx context.Context, timeout time.Duration) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &TimeoutError{After: timeout}
	}
	return ctx.Err()
}

// failure says why the process cannot answer: its init error, or how it
// exited, with the last lines it wrote.
func (p *process) failure() error {
	p.mu.Lock()
	ie := p.initErr
	p.mu.Unlock()
	if ie != nil {
		return ie
	}
	<-p.exited
	msg := "Runtime exited without providing a reason"
	if p.exitErr != nil {
		msg = "Runtime exited with error: " + p.exitErr.Error()
	}
	if tail := p.output.tail(); tail != "" {
		msg += ": " + tail
	}
	return &FunctionError{Type: "Runtime.ExitError", Message: msg}
}

// stop ends the process: SIGTERM, then SIGKILL after grace (at once when
// grace is 0), to its whole process group. It returns once it has exited.
func (p *process) stop(grace time.Duration) {
	p.stopOnce.Do(func() { close(p.stopping) })
	if grace > 0 {
		signalGroup(p.cmd, false)
		t := time.NewTimer(grace)
		select {
		case <-p.exited:
			t.Stop()
		case <-t.C:
		}
	}
	signalGroup(p.cmd, true)
	killTree(p.cmd.Process.Pid, p.marker)
	<-p.exited
	p.srv.Close()
}

// traceID is an X-Ray trace header for one invocation (not sampled).
func traceID() string {
	return fmt.Sprintf("Root=1-%08x-%s;Parent=%s;Sampled=0", time.Now().Unix(), randomHex(12), randomHex(8))
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// outputLog sends what a process writes to the logger, line by line, and
// keeps the last lines for the error of a process that exits.
//
// What it logs is bounded, so that a handler printing in a loop cannot
// fill the server's disk (3 million lines made 173 MB of log in 5 s): a
// line longer than maxLogLine is cut, with the number of bytes cut; past
// maxLinesPerSecond lines or maxBytesPerSecond bytes in a second, lines
// are dropped, counted, and the next line logged is preceded by a warning
// saying how many lines and bytes were dropped.
type outputLog struct {
	log  *slog.Logger
	now  func() time.Time // nil: time.Now
	mu   sync.Mutex
	part []byte
	cut  int // bytes of the current line past maxLogLine
	last []string

	window       time.Time // the start of the current second
	lines, bytes int       // logged in it
	droppedLines int       // dropped since the last line logged
	droppedBytes int
}

const (
	maxLogLine        = 64 << 10
	tailLines         = 8
	maxLinesPerSecond = 200
	maxBytesPerSecond = 256 << 10
)

func (o *outputLog) Write(b []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := len(b)
	for len(b) > 0 {
		i := slices.Index(b, '\n')
		end := i
		if i < 0 {
			end = len(b)
		}
		room := max(maxLogLine-len(o.part), 0)
		take := min(end, room)
		o.part = append(o.part, b[:take]...)
		o.cut += end - take
		if i < 0 {
			break
		}
		o.line()
		b = b[i+1:]
	}
	return n, nil
}

func (o *outputLog) line() {
	s := strings.TrimRight(string(o.part), "\r")
	size := len(o.part) + o.cut
	cut := o.cut
	o.part, o.cut = o.part[:0], 0
	o.last = append(o.last, s)
	if len(o.last) > tailLines {
		o.last = o.last[len(o.last)-tailLines:]
	}
	now := time.Now
	if o.now != nil {
		now = o.now
	}
	if t := now(); t.Sub(o.window) >= time.Second {
		o.window, o.lines, o.bytes = t, 0, 0
	}
	if o.lines >= maxLinesPerSecond || o.bytes+len(s) > maxBytesPerSecond {
		o.droppedLines++
		o.droppedBytes += size
		return
	}
	o.reportDropped()
	o.lines++
	o.bytes += len(s)
	if cut > 0 {
		o.log.Info(s, "truncated_bytes", cut)
		return
	}
	o.log.Info(s)
}

// reportDropped logs how much output was dropped since the last line
// logged, if any.
func (o *outputLog) reportDropped() {
	if o.droppedLines == 0 {
		return
	}
	o.log.Warn("function output dropped: it wrote faster than the log takes",
		"lines", o.droppedLines, "bytes", o.droppedBytes, "limit_lines_per_second", maxLinesPerSecond, "limit_bytes_per_second", maxBytesPerSecond)
	o.droppedLines, o.droppedBytes = 0, 0
}

func (o *outputLog) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.part) > 0 || o.cut > 0 {
		o.line()
	}
	o.reportDropped()
}

// tail is the last lines written, at most 1 KiB of them, on one line
// (the error is a trigger's LastError and a message's history).
func (o *outputLog) tail() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := strings.Join(o.last, " | ")
	if len(s) > 1024 {
		s = "…" + s[len(s)-1024:]
	}
	return s
}
