package lambdart

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Function is what a Pool runs: a Lambda function's configuration.
type Function struct {
	// Name is the function's name (AWS_LAMBDA_FUNCTION_NAME).
	Name string
	// ARN is the invoked function's ARN (Lambda-Runtime-Invoked-Function-Arn).
	ARN string
	// Runtime is one of Runtimes.
	Runtime string
	// Handler is, for python3.x, "module.function" (the module may be a
	// path: "src/app.handler" or "src.app.handler"); for go1.x, the
	// executable's name in CodeDir; for provided*, passed to the
	// bootstrap as _HANDLER.
	Handler string
	// CodeDir is the function's code: an absolute directory, the
	// process's working directory and LAMBDA_TASK_ROOT.
	CodeDir string
	// MemorySize is in MB (AWS_LAMBDA_FUNCTION_MEMORY_SIZE); 0 means 128.
	// It is not enforced.
	MemorySize int
	// Timeout is the function timeout (AWS_LAMBDA_FUNCTION_TIMEOUT);
	// invocations are bounded by their context.
	Timeout time.Duration
	// Region is AWS_REGION and AWS_DEFAULT_REGION.
	Region string
	// Environment are the function's environment variables.
	Environment map[string]string
}

// DefaultMemorySize is Lambda's default, in MB.
const DefaultMemorySize = 128

// Runtimes lists the runtimes a Pool can run; "python3.x" stands for
// every python3 minor version.
var Runtimes = []string{"provided", "provided.al2", "provided.al2023", "go1.x", "python3.x"}

var (
	pythonRuntime = regexp.MustCompile(`^python3\.[0-9]+$`)
	pythonHandler = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*([./][A-Za-z_][A-Za-z0-9_]*)*\.[A-Za-z_][A-Za-z0-9_]*$`)
)

// SupportedRuntime reports whether a Pool can run rt.
func SupportedRuntime(rt string) bool {
	return pythonRuntime.MatchString(rt) || slices.Contains(Runtimes[:4], rt)
}

// IsPython reports whether rt is a python3.x runtime.
func IsPython(rt string) bool { return pythonRuntime.MatchString(rt) }

// reservedEnv are the variables Lambda sets and does not let a function
// set (it refuses such a configuration).
var reservedEnv = []string{
	"_HANDLER", "_X_AMZN_TRACE_ID", "AWS_DEFAULT_REGION", "AWS_REGION", "AWS_EXECUTION_ENV",
	"AWS_LAMBDA_FUNCTION_NAME", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "AWS_LAMBDA_FUNCTION_VERSION",
	"AWS_LAMBDA_INITIALIZATION_TYPE", "AWS_LAMBDA_LOG_GROUP_NAME", "AWS_LAMBDA_LOG_STREAM_NAME",
	"AWS_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
	"AWS_LAMBDA_RUNTIME_API", "LAMBDA_TASK_ROOT", "LAMBDA_RUNTIME_DIR",
}

var envName = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_]*$`)

// Check validates f's settings and that its code is where they say: the
// bootstrap or the executable, or the Python module and an interpreter
// that runs. The error names what is missing.
func (f *Function) Check() error {
	if err := f.CheckCode(); err != nil {
		return err
	}
	if IsPython(f.Runtime) {
		if _, err := python(f.Runtime); err != nil {
			return err
		}
	}
	return nil
}

// CheckCode is Check without looking for a Python interpreter: what a
// client (lint, apply) can check of a function that a server will run.
// Finding the interpreter starts it, which through a version manager's
// shim (pyenv) takes seconds, and only the server's PATH matters.
func (f *Function) CheckCode() error {
	if !SupportedRuntime(f.Runtime) {
		return fmt.Errorf("runtime %q is not supported: use one of %s (container images and other runtimes are not)", f.Runtime, strings.Join(Runtimes, ", "))
	}
	if f.CodeDir == "" || !filepath.IsAbs(f.CodeDir) {
		return fmt.Errorf("the code directory must be an absolute path, not %q", f.CodeDir)
	}
	if st, err := os.Stat(f.CodeDir); err != nil || !st.IsDir() {
		return fmt.Errorf("the code directory %s does not exist or is not a directory", f.CodeDir)
	}
	if f.MemorySize < 0 || f.MemorySize > 10240 {
		return fmt.Errorf("MemorySize must be between 128 and 10240 MB, not %d", f.MemorySize)
	}
	for k := range f.Environment {
		if slices.Contains(reservedEnv, k) {
			return fmt.Errorf("environment variable %s is reserved: Lambda sets it", k)
		}
		if !envName.MatchString(k) {
			return fmt.Errorf("environment variable name %q is not valid: a letter, then letters, digits and '_'", k)
		}
	}
	switch {
	case IsPython(f.Runtime):
		if !pythonHandler.MatchString(f.Handler) {
			return fmt.Errorf("the handler of a Python function is module.function, not %q", f.Handler)
		}
		mod := pythonModule(f.Handler)
		base := filepath.Join(f.CodeDir, filepath.FromSlash(strings.ReplaceAll(mod, ".", "/")))
		if !isFile(base+".py") && !isFile(filepath.Join(base, "__init__.py")) {
			return fmt.Errorf("module %s of handler %s is not in %s (no %s.py)", mod, f.Handler, f.CodeDir, base)
		}
	case f.Runtime == "go1.x":
		if f.Handler == "" || strings.ContainsAny(f.Handler, `/\`) || f.Handler == "." || f.Handler == ".." {
			return fmt.Errorf("the handler of a go1.x function names its executable in the code directory, not %q", f.Handler)
		}
		return executable(filepath.Join(f.CodeDir, f.Handler))
	default:
		return executable(filepath.Join(f.CodeDir, "bootstrap"))
	}
	return nil
}

// pythonModule is the module of a Python handler, dotted.
func pythonModule(handler string) string {
	mod := handler[:strings.LastIndexByte(handler, '.')]
	return strings.ReplaceAll(mod, "/", ".")
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func executable(p string) error {
	st, err := os.Stat(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s does not exist: build the function first (for Go: GOOS=linux go build -o bootstrap)", p)
	case err != nil:
		return err
	case !st.Mode().IsRegular():
		return fmt.Errorf("%s is not a file", p)
	case st.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("%s is not executable", p)
	}
	return nil
}

// python finds the interpreter of a python3.x runtime: python3.x on the
// PATH if it runs (a pyenv shim may be there for a version that is not
// selected), else python3. What is kept, for the server's life, is the
// interpreter's own path (sys.executable): a version manager's shim is a
// script that takes a second or more to start it, on every invocation.
func python(runtime string) (string, error) {
	if p, ok := pythons.Load(runtime); ok {
		return p.(string), nil
	}
	for _, name := range []string{runtime, "python3"} {
		p, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		// Generous: through a shim on a loaded machine this has taken
		// over 10 s.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		out, err := exec.CommandContext(ctx, p, "-c", "import json, sys, urllib.request; print(sys.executable)").Output()
		cancel()
		if err != nil {
			continue
		}
		if exe := strings.TrimSpace(string(out)); filepath.IsAbs(exe) && isFile(exe) {
			p = exe
		}
		pythons.Store(runtime, p)
		return p, nil
	}
	return "", fmt.Errorf("runtime %s needs %s or python3 on the server's PATH", runtime, runtime)
}

var pythons sync.Map // runtime -> interpreter path

func (f *Function) memory() int {
	if f.MemorySize == 0 {
		return DefaultMemorySize
	}
	return f.MemorySize
}
