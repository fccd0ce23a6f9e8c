package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLintBeforeApply runs the binary as a user would on seed 000's
// template, whose enrichment queue has a producer and no consumer (an
// error finding): 'tidemq apply' prints the finding, exits 1 and creates
// no queue on the running server; 'tidemq serve --config' exits 1 before
// it creates its data directory. With --no-lint, apply goes ahead.
func TestLintBeforeApply(t *testing.T) {
	t.Parallel()
	seed, err := filepath.Abs(filepath.Join("..", "topology", "testdata", "seed000-morpheus.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t)
	env := clientEnv("AKID", "SECRET")
	stdout, stderr, code := runTidemq(t, env, "apply", seed, "--endpoint", s.url)
	if code != 1 || stdout != "" {
		t.Fatalf("apply: exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if !strings.Contains(stderr, "seed000-morpheus.yaml:45: error TQ005 (unconsumed-queue) EnrichmentPipelineQueue: ") ||
		!strings.HasPrefix(lines[len(lines)-1], "tidemq: ") || !strings.Contains(lines[len(lines)-1], "lint found 1 error(s), so nothing was applied") {
		t.Errorf("apply: stderr:\n%s", stderr)
	}
	if out := s.mustCall(t, "ListQueues", map[string]any{}); len(out) != 0 && out["QueueUrls"] != nil {
		t.Fatalf("queues exist after apply failed its lint: %v", out)
	}

	dataDir := filepath.Join(t.TempDir(), "data")
	_, stderr, code = runTidemq(t, nil, "serve", "--listen", "127.0.0.1:0", "--data-dir", dataDir, "--config", seed)
	if code != 1 || !strings.Contains(stderr, "resource=EnrichmentPipelineQueue") || !strings.Contains(stderr, "the server did not start") {
		t.Errorf("serve --config: exit %d, stderr:\n%s", code, stderr)
	}
	if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
		t.Errorf("serve --config created its data directory (%v) although lint failed", err)
	}

	stdout, stderr, code = runTidemq(t, env, "apply", seed, "--endpoint", s.url, "--no-lint")
	if code != 0 || !strings.Contains(stdout, "+ queue morpheus-sam-enrichment-pipeline.fifo (create)") {
		t.Fatalf("apply --no-lint: exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}
