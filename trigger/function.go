package trigger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/lambdart"
)

// Function is a target that runs a Lambda function's code on the server,
// unmodified, through the Lambda Runtime API (see package lambdart): a Go
// binary built with aws-lambda-go (Runtime provided.al2023, provided.al2,
// provided or go1.x) or a Python handler (python3.x). Each trigger keeps up
// to its MaximumConcurrency processes of the function, one batch at a time
// each; the function timeout is the trigger's Timeout (a process that
// passes it is killed and started again). Like a command, it runs code on
// the server, so it needs --allow-trigger-commands.
type Function struct {
	// Name is the function's name (AWS_LAMBDA_FUNCTION_NAME and the end
	// of its ARN); the trigger's name when empty.
	Name string `json:"Name,omitempty"`
	// Runtime is provided.al2023, provided.al2, provided, go1.x or
	// python3.x.
	Runtime string `json:"Runtime"`
	// Handler is "module.function" for Python, the executable's name for
	// go1.x, and is passed on as _HANDLER for provided runtimes.
	Handler string `json:"Handler,omitempty"`
	// CodeUri is the code's directory on the server, an absolute path: it
	// holds bootstrap (provided), the Handler's executable (go1.x) or the
	// module (Python).
	CodeUri string `json:"CodeUri"`
	// MemorySize is in MB (shown to the function, not enforced); 0 means
	// 128.
	MemorySize int `json:"MemorySize,omitempty"`
	// Environment are the function's variables. Their values are secrets:
	// the admin API shows them as Redacted.
	Environment map[string]string `json:"Environment,omitempty"`
}

// runsLocalCode reports whether the target runs code on the server: a
// command or a function. Both need Options.AllowCommands.
func (t *Target) runsLocalCode() bool { return len(t.Command) > 0 || t.Function != nil }

// lambdaFunction is what lambdart runs for c, whose queue's ARN is
// queueARN (the function gets its region and account).
func (c *Config) lambdaFunction(queueARN string) lambdart.Function {
	f := c.Target.Function
	region, account := tidemq.DefaultRegion, tidemq.DefaultAccountID
	if parts := strings.Split(queueARN, ":"); len(parts) >= 6 {
		region, account = parts[3], parts[4]
	}
	name := f.Name
	if name == "" {
		name = c.Name
	}
	return lambdart.Function{
		Name: name, ARN: fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", region, account, name),
		Runtime: f.Runtime, Handler: f.Handler, CodeDir: f.CodeUri, MemorySize: f.MemorySize,
		Timeout: c.timeout(), Region: region, Environment: f.Environment,
	}
}

// validateFunction checks a function target, its code included.
func (c *Config) validateFunction() error {
	lf := c.lambdaFunction("")
	if err := lf.Check(); err != nil {
		return invalid("Target.Function: %v", err)
	}
	return nil
}

// startFunction starts the pool of a function trigger's processes (they
// start with the first batches).
func (r *runner) startFunction() error {
	if r.cfg.Target.Function == nil {
		return nil
	}
	r.mu.Lock()
	arn := r.arn
	r.mu.Unlock()
	pool, err := lambdart.NewPool(r.cfg.lambdaFunction(arn), lambdart.Options{
		Size: r.cfg.concurrency(), Logger: r.m.log.With("trigger", r.cfg.Name),
	})
	if err != nil {
		return err
	}
	r.fn = pool
	return nil
}

// closeFunction stops a function trigger's processes, once no worker runs.
func (r *runner) closeFunction() {
	if r.fn != nil {
		if err := r.fn.Close(); err != nil {
			r.m.log.Warn("trigger function cleanup", "trigger", r.cfg.Name, "err", err)
		}
		r.fn = nil
	}
}

// invoker is what delivers this trigger's batches.
func (r *runner) invoker() invoker {
	if r.fn != nil {
		return functionInvoker{r.fn}
	}
	return newInvoker(r.cfg.Target, r.m.o.HTTPClient)
}

type functionInvoker struct{ pool *lambdart.Pool }

func (f functionInvoker) invoke(ctx context.Context, event []byte) outcome {
	resp, err := f.pool.Invoke(ctx, event)
	if err == nil {
		return outcome{resp: resp}
	}
	if ctx.Err() != nil || errors.As(err, new(*lambdart.TimeoutError)) {
		return timedOut(ctx, err)
	}
	return outcome{err: fmt.Errorf("function error: %w", err)}
}

// patchGivesFunction reports whether an update gives Target.Function,
// which then replaces the trigger's function as a whole.
func patchGivesFunction(patch []byte) (bool, error) {
	var p struct {
		Target map[string]json.RawMessage `json:"Target"`
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		return false, err
	}
	for k := range p.Target {
		if strings.EqualFold(k, "Function") {
			return true, nil
		}
	}
	return false, nil
}
