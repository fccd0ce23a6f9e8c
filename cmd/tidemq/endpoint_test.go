package main

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every command that talks to an endpoint defaults to a local tidemq, dlq
// included: reaching AWS (with whatever credentials the machine has) must
// be asked for with --endpoint aws.
func TestEndpointDefaultsToLocalTidemq(t *testing.T) {
	for _, cmd := range []*cobra.Command{newDLQCommand(), newTopCommand(), newBenchCommand(), newApplyCommand(), newAlarmsCommand()} {
		f := cmd.Flags().Lookup("endpoint")
		if f == nil {
			f = cmd.PersistentFlags().Lookup("endpoint")
		}
		if f == nil || f.DefValue != "http://127.0.0.1:9324" {
			t.Errorf("%s --endpoint default: %v", cmd.Name(), f)
		}
	}
}

// A refused connection gets a hint; other errors do not, nor a refused
// connection of serve (its PostgreSQL --store is down: "is the server
// running ('tidemq serve')?" would send the user after the wrong server).
func TestErrorHint(t *testing.T) {
	_, err := net.Dial("tcp", "127.0.0.1:1")
	if err == nil {
		t.Skip("something listens on port 1")
	}
	if h := errorHint("dlq", fmt.Errorf("list queues: %w", err)); !strings.Contains(h, "tidemq serve") {
		t.Errorf("hint for %v: %q", err, h)
	}
	if h := errorHint("dlq", errors.New("AccessDenied")); h != "" {
		t.Errorf("hint for another error: %q", h)
	}
	if h := errorHint("serve", fmt.Errorf("--store postgres://db/x: %w", err)); h != "" {
		t.Errorf("serve's hint for a refused database connection: %q", h)
	}
}
