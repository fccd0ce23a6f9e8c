package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// boto3 against one in-memory server: each scenario of
// testdata/boto3_scenarios.py asserts in python and prints {"ok": true, ...}.
func TestBoto3(t *testing.T) {
	t.Parallel()
	requireBoto3(t)
	s := startServer(t)
	scenarios := []struct{ name, scenario string }{
		{"SNSEnvelopeDelayDepthVisibility", "sns_envelope"},
		{"RedriveLoopFromDLQ", "redrive_loop"},
		{"FIFOGroupsDedupAndDLQ", "fifo"},
		{"ModeledExceptions", "exceptions"},
		{"LongPolling", "long_poll"},
		{"VisibilityTimeoutRealTime", "visibility"},
	}
	// The scenarios mostly wait on real time (delays, long polls, visibility
	// timeouts), so they all start at once rather than two at a time as
	// parallel subtests would; each subtest then reports its own.
	results := make([]chan toolResult, len(scenarios))
	env := clientEnv("AKIDE2ETEST", "e2e-secret")
	for i, sc := range scenarios {
		results[i] = make(chan toolResult, 1)
		go func() {
			results[i] <- execToolWithin(scenarioTimeout, env, "python3", filepath.Join("testdata", "boto3_scenarios.py"), s.url, sc.scenario)
		}()
	}
	for i, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			r := <-results[i]
			if r.err != nil {
				t.Fatalf("%s: %v", r.cmd, r.err)
			}
			if r.code != 0 {
				t.Fatalf("scenario %s failed:\n%s", sc.scenario, r)
			}
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			var out map[string]any
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &out); err != nil || out["ok"] != true {
				t.Fatalf("scenario %s did not report success:\n%s", sc.scenario, r)
			}
			t.Logf("%s: %s", sc.scenario, lines[len(lines)-1])
		})
	}

	// README: newer SDKs find tidemq through AWS_ENDPOINT_URL_SQS alone.
	t.Run("EndpointFromEnvironment", func(t *testing.T) {
		env := append(clientEnv("AKIDE2ETEST", "e2e-secret"), "AWS_ENDPOINT_URL_SQS="+s.url, "AWS_DEFAULT_REGION=us-east-1")
		r := runTool(t, env, "python3", "-c",
			`import boto3; print(boto3.client("sqs").create_queue(QueueName="py-env-endpoint")["QueueUrl"])`)
		if want := s.url + "/" + account + "/py-env-endpoint"; r.code != 0 || strings.TrimSpace(r.stdout) != want {
			t.Errorf("boto3 with only AWS_ENDPOINT_URL_SQS: want %s\n%s", want, r)
		}
	})
}
