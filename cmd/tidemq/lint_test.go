package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
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
	if !strings.Contains(out, "seed000-morpheus.yaml:45: error TQ005 (unconsumed-queue) EnrichmentPipelineQueue: ") || !strings.Contains(out, "1 errors, 3 warnings, 2 notes") {
		t.Errorf("output:\n%s", out)
	}
	out, _ = run(newLintCommand(), "--format", "json", seedTemplate)
	var fs []map[string]any
	if err := json.Unmarshal([]byte(out), &fs); err != nil || len(fs) != 6 || fs[2]["rule"] != "TQ005" || fs[2]["line"] != 45.0 || fs[2]["resource"] != "EnrichmentPipelineQueue" {
		t.Errorf("json: %v %s", err, out)
	}
	out, _ = run(newLintCommand(), "--format", "sarif", seedTemplate)
	var sarif struct {
		Version string
		Runs    []struct {
			Results []struct {
				RuleID, Level string
				Locations     []struct {
					PhysicalLocation struct{ ArtifactLocation struct{ URI string } }
					LogicalLocations []struct{ Name, Kind string }
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &sarif); err != nil || sarif.Version != "2.1.0" || len(sarif.Runs[0].Results) != 6 || sarif.Runs[0].Results[2].Level != "error" {
		t.Errorf("sarif: %v %s", err, out)
	} else if loc := sarif.Runs[0].Results[2].Locations[0]; loc.PhysicalLocation.ArtifactLocation.URI != "../../topology/testdata/seed000-morpheus.yaml" {
		t.Errorf("sarif artifactLocation.uri = %q", loc.PhysicalLocation.ArtifactLocation.URI)
	} else if len(loc.LogicalLocations) != 1 || loc.LogicalLocations[0].Name != "EnrichmentPipelineQueue" || loc.LogicalLocations[0].Kind != "resource" {
		t.Errorf("sarif logicalLocations = %+v", loc.LogicalLocations)
	}
	// Warnings only: exit 0.
	dir := t.TempDir()
	clean := filepath.Join(dir, "tidemq.yaml")
	os.WriteFile(clean, []byte("queues:\n  - name: solo\n"), 0o644)
	out, err = run(newLintCommand(), clean)
	if err != nil || !strings.Contains(out, "tidemq.yaml:2: warning TQ007 (missing-dlq) queues[solo]: ") {
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

// TestApplyCommand applies the seed template (with --no-lint: it has a
// lint error, the queue nobody reads) to an in-process server, twice: its six queues over the SQS API, and email-agent's trigger (its
// Metadata gives it a local URL) over the admin API; morpheus-hubspot's
// event source has no local stand-in and is listed as not applied.
func TestApplyCommand(t *testing.T) {
	s := newTestServer(t)
	out, err := run(newApplyCommand(), seedTemplate, "--endpoint", s.url, "--dry-run", "--no-lint")
	if err != nil || !strings.Contains(out, "7 to create, 0 to update, 0 unchanged, 1 not applied") || !strings.Contains(out, "dry run") {
		t.Fatalf("err %v, output:\n%s", err, out)
	}
	out, err = run(newApplyCommand(), seedTemplate, "--endpoint", s.url, "--no-lint")
	if err != nil || !strings.Contains(out, "+ queue morpheus-sam-crm-sync-dlq.fifo (create)") ||
		!strings.Contains(out, "+ trigger email-agent.morpheus-sam-email-agent (create)") ||
		!strings.Contains(out, "! trigger morpheus-hubspot.morpheus-sam-crm-sync.fifo (not applied: function morpheus-hubspot has no url or command to stand for it locally)") {
		t.Fatalf("err %v, output:\n%s", err, out)
	}
	out, err = run(newApplyCommand(), seedTemplate, "--endpoint", s.url, "--no-lint")
	if err != nil || !strings.Contains(out, "0 to create, 0 to update, 7 unchanged, 1 not applied") {
		t.Fatalf("err %v, output:\n%s", err, out)
	}
}

// TestLintExitStatus: findings that are errors exit 1; a file that cannot
// be linted at all (missing, not YAML, a template that cannot be
// evaluated, an alias bomb) or a bad flag exits 2, so CI can tell "the
// topology has problems" from "lint did not run".
func TestLintExitStatus(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for i, prev := range []string{"a", "b", "c", "d", "e", "f"} {
		name := string(rune('b' + i))
		bomb += name + ": &" + name + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
	}
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"findings", []string{seedTemplate}, 1, "lint found errors"},
		{"missing", []string{filepath.Join(dir, "nope.yaml")}, 2, "no such file"},
		{"syntax", []string{write("syntax.yaml", "Resources:\n  Q: {Type: [a\n")}, 2, "not found"},
		{"intrinsic", []string{write("frob.yaml", "Resources:\n  Q:\n    Type: AWS::SQS::Queue\n    Properties: {QueueName: !Frob x}\n")}, 2, "unsupported intrinsic"},
		{"cycle", []string{write("cycle.yaml", "Resources:\n  Q:\n    Type: AWS::SQS::Queue\n    Properties: {QueueName: !Ref Q}\n")}, 2, "depends on itself"},
		{"bomb", []string{write("bomb.yaml", bomb)}, 2, "billion laughs"},
		{"format", []string{"--format", "xml", seedTemplate}, 2, "--format"},
		{"no file", nil, 2, "arg"},
	}
	for _, c := range cases {
		_, err := run(newLintCommand(), c.args...)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != c.code || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: err = %v, want exit %d with %q", c.name, err, c.code, c.msg)
		}
	}
}
