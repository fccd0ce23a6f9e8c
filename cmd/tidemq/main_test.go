package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
)

// TestMistypedSubcommandIsAnError: 'tidemq dlq lsit' and 'tidemq trigger
// lst' printed the group's help and exited 0, so a script went on as if
// it had listed. They are errors (exit 2) that name the closest command;
// the group alone still prints its help.
func TestMistypedSubcommandIsAnError(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"dlq", "lsit"}, `unknown command "lsit" for "tidemq dlq": did you mean "tidemq dlq list"?`},
		{[]string{"trigger", "lst"}, `unknown command "lst" for "tidemq trigger": did you mean "tidemq trigger list"?`},
		{[]string{"dlq", "xyzzy"}, `unknown command "xyzzy" for "tidemq dlq" (see 'tidemq dlq --help')`},
	} {
		root := newRootCommand()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(tc.args)
		_, err := root.ExecuteContextC(context.Background())
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 2 || err.Error() != tc.want {
			t.Errorf("%v: %v, want exit 2 and %q", tc.args, err, tc.want)
		}
	}
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"dlq"})
	if err := root.Execute(); err != nil || !strings.Contains(out.String(), "Available Commands:") {
		t.Errorf("tidemq dlq: %v\n%s", err, out.String())
	}
}

// TestBusyPortHintsAtListen: a port already taken says how to choose
// another.
func TestBusyPortHintsAtListen(t *testing.T) {
	err := fmt.Errorf("listen on 127.0.0.1:9324: %w", syscall.EADDRINUSE)
	if h := errorHint("serve", err); !strings.Contains(h, "--listen") || !strings.Contains(h, "TIDEMQ_LISTEN") {
		t.Errorf("hint %q", h)
	}
	if h := errorHint("dlq", err); h != "" {
		t.Errorf("a client command got the listen hint: %q", h)
	}
}
