package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/tidemq/tidemq/api/sqs"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
)

const seedTemplate = "../../topology/testdata/seed000-morpheus.yaml"

func run(cmd *cobra.Command, args ...string) (string, error) {
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func TestLintCommand(t *testing.T) {
	out, err := run(newLintCommand(), seedTemplate)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 1 {
		t.Fatalf("err = %v, want exit 1", err)
	}
	if !strings.Contains(out, "seed000-morpheus.yaml:45: error TQ005 (unconsumed-queue)") || !strings.Contains(out, "1 errors, 3 warnings, 0 notes") {
		t.Errorf("output:\n%s", out)
	}
	out, _ = run(newLintCommand(), "--format", "json", seedTemplate)
	var fs []map[string]any
	if err := json.Unmarshal([]byte(out), &fs); err != nil || len(fs) != 4 || fs[1]["rule"] != "TQ005" || fs[1]["line"] != 45.0 {
		t.Errorf("json: %v %s", err, out)
	}
	out, _ = run(newLintCommand(), "--format", "sarif", seedTemplate)
	var sarif struct {
		Version string
		Runs    []struct {
			Results []struct{ RuleID, Level string }
		}
	}
	if err := json.Unmarshal([]byte(out), &sarif); err != nil || sarif.Version != "2.1.0" || len(sarif.Runs[0].Results) != 4 || sarif.Runs[0].Results[1].Level != "error" {
		t.Errorf("sarif: %v %s", err, out)
	}
	// Warnings only: exit 0.
	dir := t.TempDir()
	clean := filepath.Join(dir, "tidemq.yaml")
	os.WriteFile(clean, []byte("queues:\n  - name: solo\n"), 0o644)
	out, err = run(newLintCommand(), clean)
	if err != nil || !strings.Contains(out, "tidemq.yaml:2: warning TQ007") {
		t.Errorf("err %v, output:\n%s", err, out)
	}
	out, err = run(newLintCommand(), "--schema")
	if err != nil || !json.Valid([]byte(out)) {
		t.Errorf("schema: %v", err)
	}
}

func TestImportCommand(t *testing.T) {
	out, err := run(newImportCommand(), seedTemplate)
	if err != nil || !strings.Contains(out, "- name: morpheus-sam-crm-sync.fifo\n    fifo: true\n    visibilityTimeout: 360") {
		t.Errorf("err %v, output:\n%s", err, out)
	}
}

// TestApplyCommand applies the seed template over the SQS API to an
// in-process server, twice.
func TestApplyCommand(t *testing.T) {
	eng, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	srv := httptest.NewServer(sqs.NewHandler(sqs.Config{Broker: eng, Region: "us-east-1", AccountID: "000000000000"}))
	defer srv.Close()
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	out, err := run(newApplyCommand(), seedTemplate, "--endpoint", srv.URL, "--dry-run")
	if err != nil || !strings.Contains(out, "6 to create, 0 to update, 0 unchanged") || !strings.Contains(out, "dry run") {
		t.Fatalf("err %v, output:\n%s", err, out)
	}
	out, err = run(newApplyCommand(), seedTemplate, "--endpoint", srv.URL)
	if err != nil || !strings.Contains(out, "+ morpheus-sam-crm-sync-dlq.fifo (create)") {
		t.Fatalf("err %v, output:\n%s", err, out)
	}
	out, err = run(newApplyCommand(), seedTemplate, "--endpoint", srv.URL)
	if err != nil || !strings.Contains(out, "0 to create, 0 to update, 6 unchanged") {
		t.Fatalf("err %v, output:\n%s", err, out)
	}
}
