package topology

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tidemq/tidemq/lambdart"
	"github.com/tidemq/tidemq/trigger"
)

// LambdaTarget returns the target that runs f's own code on tidemq (see
// trigger.Function) for a function without a URL or a Command, or, when
// its code cannot run there, why not. Both are zero for a function that
// declares no runtime or no CodeUri. CodeUri is relative to the file c was read from;
// for a template built with `sam build`, the built code in
// .aws-sam/build/<logical id> beside it is used when CodeUri holds no
// runnable code (a Go function's sources, say).
func (c *Config) LambdaTarget(f *Function) (*trigger.Function, string) {
	if f.HasLocalTarget() || f.Runtime == "" || f.CodeUri == "" {
		return nil, ""
	}
	if !lambdart.SupportedRuntime(f.Runtime) {
		return nil, fmt.Sprintf("function %s: runtime %s cannot run on tidemq (it runs %s)", f.Name, f.Runtime, strings.Join(lambdart.Runtimes, ", "))
	}
	base := "."
	if c.File != "" {
		base = filepath.Dir(c.File)
	}
	dirs := []string{f.CodeUri}
	if !filepath.IsAbs(f.CodeUri) {
		dirs[0] = filepath.Join(base, filepath.FromSlash(f.CodeUri))
	}
	if f.buildID != "" {
		dirs = append(dirs, filepath.Join(base, ".aws-sam", "build", f.buildID))
	}
	var firstErr error
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Sprintf("function %s: %v", f.Name, err)
		}
		lf := lambdart.Function{Name: f.Name, Runtime: f.Runtime, Handler: f.Handler, CodeDir: abs, Environment: f.Environment}
		if f.MemorySize != nil {
			lf.MemorySize = *f.MemorySize
		}
		err = lf.CheckCode()
		if err == nil {
			tf := &trigger.Function{Name: f.Name, Runtime: f.Runtime, Handler: f.Handler, CodeUri: abs, MemorySize: lf.MemorySize}
			if len(f.Environment) > 0 {
				tf.Environment = f.Environment
			}
			return tf, ""
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, fmt.Sprintf("function %s cannot run on tidemq: %v", f.Name, firstErr)
}
