package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedWithSuppression is seed 000's template with its deliberately
// disabled consumer (the enrichment queue nobody reads) suppressed in the
// queue's Metadata, with the reason.
func seedWithSuppression(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(seedTemplate)
	if err != nil {
		t.Fatal(err)
	}
	const anchor = "  EnrichmentPipelineQueue:\n    Type: AWS::SQS::Queue\n"
	if !strings.Contains(string(data), anchor) {
		t.Fatal("the seed template changed")
	}
	s := strings.Replace(string(data), anchor, anchor+`    Metadata:
      tidemq:
        suppress:
          - rule: TQ005
            reason: enrichment-scorer's event source is commented out until the model is retrained
`, 1)
	f := filepath.Join(t.TempDir(), "template.yaml")
	if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestLintSuppression: seed 000's real template would not apply (its
// disabled consumer is error TQ005) and the only way past was --no-lint,
// which dropped every other check. One suppression in the resource's
// Metadata, or on the command line, now lets it through; the finding is
// still shown, as suppressed, in text, JSON and SARIF, and every other
// finding still counts.
func TestLintSuppression(t *testing.T) {
	tmpl := seedWithSuppression(t)
	out, err := run(newLintCommand(), tmpl)
	if err != nil {
		t.Fatalf("lint with the suppression: %v\n%s", err, out)
	}
	for _, want := range []string{
		":50: suppressed error TQ005 (unconsumed-queue) EnrichmentPipelineQueue: queue morpheus-sam-enrichment-pipeline.fifo has producers",
		"    suppressed (template): enrichment-scorer's event source is commented out until the model is retrained\n",
		"warning TQ006 (dlq-alarm) CrmSyncDLQ",
		"0 errors, 3 warnings, 2 notes, 1 suppressed\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}

	out, err = run(newLintCommand(), tmpl, "--format", "json")
	var fs []struct {
		Rule, Resource, Severity string
		Suppressed               *struct{ Rule, Resource, Reason, Source string }
	}
	if err != nil || json.Unmarshal([]byte(out), &fs) != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	n := 0
	for _, f := range fs {
		if f.Suppressed != nil {
			n++
			if f.Rule != "TQ005" || f.Resource != "EnrichmentPipelineQueue" || f.Suppressed.Source != "template" ||
				!strings.HasPrefix(f.Suppressed.Reason, "enrichment-scorer's") {
				t.Errorf("json suppressed finding %+v %+v", f, f.Suppressed)
			}
		}
	}
	if n != 1 {
		t.Errorf("json: %d suppressed findings\n%s", n, out)
	}

	out, err = run(newLintCommand(), tmpl, "--format", "sarif")
	var sarif struct {
		Runs []struct {
			Results []struct {
				RuleID       string
				Suppressions []struct{ Kind, Justification string }
			}
		}
	}
	if err != nil || json.Unmarshal([]byte(out), &sarif) != nil {
		t.Fatalf("sarif: %v\n%s", err, out)
	}
	n = 0
	for _, r := range sarif.Runs[0].Results {
		if len(r.Suppressions) > 0 {
			n++
			if r.RuleID != "TQ005" || r.Suppressions[0].Kind != "inSource" || !strings.HasPrefix(r.Suppressions[0].Justification, "enrichment-scorer's") {
				t.Errorf("sarif result %+v", r)
			}
		}
	}
	if n != 1 {
		t.Errorf("sarif: %d suppressed results", n)
	}

	// The same from the command line, on the unmodified template: per
	// resource, and per rule for every resource.
	out, err = run(newLintCommand(), seedTemplate, "--suppress", "TQ005:EnrichmentPipelineQueue", "--suppress", "dlq-alarm")
	if err != nil || !strings.Contains(out, "0 errors, 0 warnings, 2 notes, 4 suppressed") ||
		!strings.Contains(out, "    suppressed (command line): --suppress TQ005:EnrichmentPipelineQueue") {
		t.Errorf("--suppress: %v\n%s", err, out)
	}
	out, err = run(newLintCommand(), seedTemplate, "--suppress", "TQ005:CrmSyncQueue", "--format", "sarif")
	if code := exitCode(err); code != 1 || strings.Contains(out, `"suppressions"`) {
		t.Errorf("a suppression for another resource silenced the finding: exit %d\n%s", code, out)
	}
	_, err = run(newLintCommand(), seedTemplate, "--suppress", "TQ999")
	if code := exitCode(err); code != 2 || !strings.Contains(err.Error(), `unknown rule "TQ999"`) {
		t.Errorf("unknown rule: exit %d, %v", code, err)
	}

	// apply: the suppressed template applies; the finding is reported as
	// suppressed on stderr.
	s := newTestServer(t)
	out, stderr, err := runStderr(newApplyCommand(), tmpl, "--endpoint", s.url)
	if err != nil || !strings.Contains(out, "+ queue morpheus-sam-enrichment-pipeline.fifo (create)") ||
		!strings.Contains(stderr, "suppressed error TQ005 (unconsumed-queue) EnrichmentPipelineQueue") {
		t.Fatalf("apply with the suppression: %v\n%s\n%s", err, out, stderr)
	}
}

// TestLintSuppressionNeedsAReason: a suppression in a file without a
// reason, or for a rule that does not exist, is itself an error finding.
func TestLintSuppressionNeedsAReason(t *testing.T) {
	f := filepath.Join(t.TempDir(), "tidemq.yaml")
	if err := os.WriteFile(f, []byte(warnOnly+`lint:
  suppress:
    - {rule: missing-dlq, resource: "queues[solo]", reason: "solo is a scratch queue"}
    - {rule: TQ008}
    - {rule: TQ404, reason: typo}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := run(newLintCommand(), f)
	if exitCode(err) != 1 || !strings.Contains(out, "suppressed warning TQ007 (missing-dlq) queues[solo]") ||
		!strings.Contains(out, "error TQ012 (invalid-configuration): suppression of TQ008 gives no reason") ||
		!strings.Contains(out, `error TQ012 (invalid-configuration): suppression of TQ404: unknown rule "TQ404"`) {
		t.Errorf("exit %d:\n%s", exitCode(err), out)
	}
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var e *exitError
	if errors.As(err, &e) {
		return e.code
	}
	return -1
}
