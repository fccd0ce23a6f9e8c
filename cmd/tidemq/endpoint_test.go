package main

import (
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
