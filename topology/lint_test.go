package topology

import (
	"strings"
	"testing"
)

// clean lints without findings: it is the negative case of every rule.
const clean = `version: 1
queues:
  - name: orders.fifo
    fifo: true
    visibilityTimeout: 360
    messageRetentionPeriod: 345600
    redrivePolicy:
      deadLetterQueue: orders-dlq.fifo
      maxReceiveCount: 1
  - name: orders-dlq.fifo
    fifo: true
    messageRetentionPeriod: 1209600
  - name: mail
    visibilityTimeout: 180
    redrivePolicy:
      deadLetterQueue: mail-dlq
      maxReceiveCount: 3
  - name: mail-dlq
    messageRetentionPeriod: 1209600
functions:
  - name: worker
    timeout: 300
    reservedConcurrency: 10
  - name: mailer
    timeout: 120
  - name: producer
    produces: [orders.fifo, mail]
triggers:
  - queue: orders.fifo
    function: worker
    batchSize: 1
    reportBatchItemFailures: true
    maximumConcurrency: 10
  - queue: mail
    function: mailer
    batchSize: 100
    maximumBatchingWindowInSeconds: 5
    reportBatchItemFailures: true
alarms:
  - name: orders-dlq-depth
    queue: orders-dlq.fifo
    metric: ApproximateNumberOfMessagesVisible
    threshold: 0
  - name: mail-dlq-depth
    queue: mail-dlq
    metric: ApproximateNumberOfMessagesVisible
    threshold: 0
`

func lintText(t *testing.T, text string) []Finding {
	t.Helper()
	c, err := Parse([]byte(text))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, text)
	}
	c.File = "tidemq.yaml"
	return Lint(c)
}

func TestCleanTopologyHasNoFindings(t *testing.T) {
	for _, text := range []string{clean, cleanTopics} {
		if fs := lintText(t, text); len(fs) != 0 {
			for _, f := range fs {
				t.Error(f)
			}
		}
	}
}

// ruleCase changes a clean topology so that exactly one rule fires, at the
// given line.
type ruleCase struct {
	name      string
	old, new  string
	rule      string
	severity  Severity
	line      int
	inMessage string
}

func TestRulesPositive(t *testing.T) {
	cases := []ruleCase{
		{"visibility not above timeout", "visibilityTimeout: 360", "visibilityTimeout: 300", RuleVisibilityTimeout, SeverityError, 5, "not above the 300 s timeout"},
		{"visibility headroom too small", "visibilityTimeout: 360", "visibilityTimeout: 320", RuleVisibilityTimeout, SeverityWarning, 5, "only 20 s"},
		{"batch without partial failures", "    batchSize: 1\n    reportBatchItemFailures: true\n", "    batchSize: 5\n", RuleBatchItemFailures, SeverityWarning, 31, "batches of 5"},
		{"default batch without partial failures", "    batchSize: 1\n    reportBatchItemFailures: true\n", "", RuleBatchItemFailures, SeverityWarning, 29, "10 (Lambda's default)"},
		{"dlq type mismatch", "      deadLetterQueue: mail-dlq\n", "      deadLetterQueue: orders-dlq.fifo\n", RuleDLQType, SeverityError, 16, "standard but its dead-letter queue orders-dlq.fifo is FIFO"},
		{"dlq retention shorter", "  - name: mail-dlq\n    messageRetentionPeriod: 1209600", "  - name: mail-dlq\n    messageRetentionPeriod: 86400", RuleDLQRetention, SeverityWarning, 19, "retains for 1 day, less than its source mail (4 days)"},
		{"produced but not consumed", "  - queue: mail\n    function: mailer\n", "  - queue: mail\n    function: mailer\n    enabled: false\n", RuleUnconsumedQueue, SeverityError, 13, "its event source is disabled"},
		{"dlq without alarm", "  - name: mail-dlq-depth\n    queue: mail-dlq\n", "  - name: mail-dlq-depth\n    queue: mail\n", RuleDLQAlarm, SeverityWarning, 18, "mail-dlq (of mail) has no alarm"},
		{"queue without dlq", "    redrivePolicy:\n      deadLetterQueue: mail-dlq\n      maxReceiveCount: 3\n", "", RuleMissingDLQ, SeverityWarning, 13, "mail has no dead-letter queue"},
		{"fifo head of line", "      maxReceiveCount: 1\n", "      maxReceiveCount: 3\n", RuleHeadOfLine, SeverityWarning, 9, "3 × 360 s = 18 min"},
		{"concurrency above reserved", "    reservedConcurrency: 10", "    reservedConcurrency: 5", RuleConcurrency, SeverityWarning, 33, "allows 10 concurrent invocations but the function reserves only 5"},
		{"content-based dedup", "    messageRetentionPeriod: 345600\n", "    messageRetentionPeriod: 345600\n    contentBasedDeduplication: true\n", RuleContentDedup, SeverityWarning, 7, "cannot be known statically"},
		{"batch over 10 without window", "    maximumBatchingWindowInSeconds: 5\n", "", RuleEventSourceLimits, SeverityError, 36, "needs MaximumBatchingWindowInSeconds ≥ 1"},
		{"fifo batch over 10", "    batchSize: 1\n    reportBatchItemFailures: true\n    maximumConcurrency: 10", "    batchSize: 20\n    maximumBatchingWindowInSeconds: 1\n    reportBatchItemFailures: true\n    maximumConcurrency: 10", RuleEventSourceLimits, SeverityError, 31, "FIFO event sources take at most 10"},
		{"standard batch over 10000", "    batchSize: 100\n", "    batchSize: 20000\n", RuleEventSourceLimits, SeverityError, 36, "above the standard-queue maximum"},
		{"invalid attribute", "    visibilityTimeout: 180", "    visibilityTimeout: 180\n    delaySeconds: 901", RuleInvalidConfiguration, SeverityError, 13, "DelaySeconds"},
		{"function url and command", "    reservedConcurrency: 10", "    reservedConcurrency: 10\n    url: http://127.0.0.1:8080/\n    command: [./worker]", RuleInvalidConfiguration, SeverityError, 25, "both a url and a command"},
		{"function url without scheme", "    reservedConcurrency: 10", "    reservedConcurrency: 10\n    url: 127.0.0.1:8080", RuleInvalidConfiguration, SeverityError, 24, "not an http:// or https:// URL"},
		{"undeclared dlq", "      deadLetterQueue: mail-dlq\n", "      deadLetterQueue: nowhere\n", RuleInvalidConfiguration, SeverityError, 16, "nowhere, which is not declared"},
	}
	runRuleCases(t, clean, cases)
}

// runRuleCases lints base with each case's change and checks that the
// case's rule fires, and no other.
func runRuleCases(t *testing.T, base string, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(base, tc.old) {
				t.Fatalf("clean topology has no %q", tc.old)
			}
			fs := lintText(t, strings.Replace(base, tc.old, tc.new, 1))
			var hit *Finding
			for i := range fs {
				if fs[i].Rule == tc.rule {
					if hit == nil || strings.Contains(fs[i].Message, tc.inMessage) {
						hit = &fs[i]
					}
				} else if tc.name != "undeclared dlq" && tc.name != "dlq type mismatch" {
					t.Errorf("unexpected finding: %s", fs[i])
				}
			}
			if hit == nil {
				t.Fatalf("no %s finding; got %v", tc.rule, fs)
			}
			if hit.Severity != tc.severity || hit.Line != tc.line || !strings.Contains(hit.Message, tc.inMessage) {
				t.Errorf("got %s\nwant %s at line %d with %q", hit, tc.severity, tc.line, tc.inMessage)
			}
			if hit.Hint == "" || hit.File != "tidemq.yaml" {
				t.Errorf("finding without hint or file: %+v", hit)
			}
		})
	}
}

// A queue that nobody produces to and nobody reads is not flagged: its
// producers may live outside the topology.
func TestUnconsumedNeedsAProducer(t *testing.T) {
	text := strings.Replace(clean, "    produces: [orders.fifo, mail]\n", "    produces: [orders.fifo]\n", 1)
	text = strings.Replace(text, "  - queue: mail\n    function: mailer\n", "  - queue: mail\n    function: mailer\n    enabled: false\n", 1)
	if fs := lintText(t, text); len(fs) != 0 {
		t.Errorf("findings: %v", fs)
	}
}

// An SNS subscription is a producer.
func TestSubscriptionIsAProducer(t *testing.T) {
	text := strings.Replace(clean, "triggers:\n  - queue: orders.fifo", "topics:\n  - name: events\n    subscriptions:\n      - protocol: sqs\n        endpoint: mail\ntriggers:\n  - queue: orders.fifo", 1)
	text = strings.Replace(text, "    produces: [orders.fifo, mail]\n", "    produces: [orders.fifo]\n", 1)
	text = strings.Replace(text, "  - queue: mail\n    function: mailer\n", "  - queue: mail\n    function: mailer\n    enabled: false\n", 1)
	fs := lintText(t, text)
	if len(fs) != 1 || fs[0].Rule != RuleUnconsumedQueue || !strings.Contains(fs[0].Message, "topic events") {
		t.Errorf("findings: %v", fs)
	}
}

func TestParseRejectsUnknownFields(t *testing.T) {
	_, err := Parse([]byte("queues:\n  - name: a\n    visibility: 30\n"))
	if err == nil || !strings.Contains(err.Error(), "visibility") {
		t.Errorf("err = %v", err)
	}
	if _, err := Parse([]byte("version: 2\n")); err == nil {
		t.Error("version 2 accepted")
	}
}

// A function with a local target (a url, or a command) lints clean: the
// negative case of the function checks of TQ012.
func TestLocalTargetIsClean(t *testing.T) {
	for _, target := range []string{"    url: https://127.0.0.1:8443/worker\n    headers: {X-A: b}\n", "    command: [./worker, --once]\n    dir: lambdas\n"} {
		text := strings.Replace(clean, "    reservedConcurrency: 10\n", "    reservedConcurrency: 10\n"+target, 1)
		if fs := lintText(t, text); len(fs) != 0 {
			t.Errorf("%q: findings %v", target, fs)
		}
	}
}
