package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
)

// addFunctionFlags adds the flags of a function target: a Lambda function
// the server runs through the Lambda Runtime API.
func addFunctionFlags(f *pflag.FlagSet) {
	f.String("runtime", "", "function target: a Lambda runtime run by the server, unmodified: provided.al2023, provided.al2, provided, go1.x or python3.x (with --code-uri; the server needs --allow-trigger-commands)")
	f.String("handler", "", "function target: module.function (Python), the executable's name (go1.x), _HANDLER (provided)")
	f.String("code-uri", "", "function target: the code's directory (bootstrap, the executable or the module); a relative one is sent absolute")
	f.Int("memory-size", 0, "function target: MemorySize in MB, shown to the function (default 128)")
	f.StringArray("env", nil, "function target: an environment variable NAME=VALUE (repeatable); the values are secrets")
}

var functionFlags = []string{"runtime", "handler", "code-uri", "memory-size", "env"}

// functionTargetJSON is the Function target the flags give, or nil when
// they give none. A function is given as a whole (an update replaces the
// trigger's function): --runtime and --code-uri are always needed.
func functionTargetJSON(f *pflag.FlagSet, otherTarget bool) (map[string]any, error) {
	given := false
	for _, name := range functionFlags {
		given = given || f.Changed(name)
	}
	if !given {
		return nil, nil
	}
	if otherTarget {
		return nil, fmt.Errorf("give one target: --url, a command after --, or a function (--runtime)")
	}
	runtime, _ := f.GetString("runtime")
	code, _ := f.GetString("code-uri")
	if runtime == "" || code == "" {
		return nil, fmt.Errorf("a function target needs --runtime and --code-uri (and --handler for Python and go1.x)")
	}
	abs, err := filepath.Abs(code)
	if err != nil {
		return nil, err
	}
	fn := map[string]any{"Runtime": runtime, "CodeUri": abs}
	if h, _ := f.GetString("handler"); h != "" {
		fn["Handler"] = h
	}
	if m, _ := f.GetInt("memory-size"); m != 0 {
		fn["MemorySize"] = m
	}
	if f.Changed("env") {
		vars, _ := f.GetStringArray("env")
		env := map[string]string{}
		for _, kv := range vars {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return nil, fmt.Errorf("--env takes NAME=VALUE, not %q", kv)
			}
			env[k] = v
		}
		fn["Environment"] = env
	}
	return fn, nil
}
