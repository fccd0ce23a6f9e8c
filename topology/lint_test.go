package topology

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// clean lints without findings: it is the negative case of every rule.
const clean = `version: 1
queues:
  - name: orders.fifo
    fifo: true
    visibilityTimeout: 170
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
    timeout: 120
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
		{"visibility not above timeout", "visibilityTimeout: 170", "visibilityTimeout: 120", RuleVisibilityTimeout, SeverityError, 5, "not above the 120 s timeout"},
		{"visibility headroom too small", "visibilityTimeout: 170", "visibilityTimeout: 140", RuleVisibilityTimeout, SeverityWarning, 5, "only 20 s"},
		{"batch without partial failures", "    batchSize: 1\n    reportBatchItemFailures: true\n", "    batchSize: 5\n", RuleBatchItemFailures, SeverityWarning, 31, "batches of 5"},
		{"default batch without partial failures", "    batchSize: 1\n    reportBatchItemFailures: true\n", "", RuleBatchItemFailures, SeverityWarning, 29, "10 (Lambda's default)"},
		{"dlq type mismatch", "      deadLetterQueue: mail-dlq\n", "      deadLetterQueue: orders-dlq.fifo\n", RuleDLQType, SeverityError, 16, "standard but its dead-letter queue orders-dlq.fifo is FIFO"},
		{"dlq retention shorter", "  - name: mail-dlq\n    messageRetentionPeriod: 1209600", "  - name: mail-dlq\n    messageRetentionPeriod: 86400", RuleDLQRetention, SeverityWarning, 19, "retains for 1 day, less than its source mail (4 days)"},
		{"produced but not consumed", "  - queue: mail\n    function: mailer\n", "  - queue: mail\n    function: mailer\n    enabled: false\n", RuleUnconsumedQueue, SeverityError, 13, "its event source is disabled"},
		{"dlq without alarm", "  - name: mail-dlq-depth\n    queue: mail-dlq\n", "  - name: mail-dlq-depth\n    queue: mail\n", RuleDLQAlarm, SeverityWarning, 18, "mail-dlq (of mail) has no alarm"},
		{"queue without dlq", "    redrivePolicy:\n      deadLetterQueue: mail-dlq\n      maxReceiveCount: 3\n", "", RuleMissingDLQ, SeverityWarning, 13, "mail has no dead-letter queue"},
		{"fifo head of line at 3 min", "visibilityTimeout: 170", "visibilityTimeout: 180", RuleHeadOfLine, SeverityInfo, 9, "1 × 180 s = 3 min"},
		{"fifo head of line above 15 min", "      maxReceiveCount: 1\n", "      maxReceiveCount: 6\n", RuleHeadOfLine, SeverityWarning, 9, "6 × 170 s = 17 min"},
		{"concurrency above reserved", "    reservedConcurrency: 10", "    reservedConcurrency: 5", RuleConcurrency, SeverityWarning, 33, "allows 10 concurrent invocations but the function reserves only 5"},
		{"content-based dedup", "    messageRetentionPeriod: 345600\n", "    messageRetentionPeriod: 345600\n    contentBasedDeduplication: true\n", RuleContentDedup, SeverityWarning, 7, "cannot be known statically"},
		{"batch over 10 without window", "    maximumBatchingWindowInSeconds: 5\n", "", RuleEventSourceLimits, SeverityError, 36, "needs MaximumBatchingWindowInSeconds ≥ 1"},
		{"fifo batch with partial failures", "    batchSize: 1\n    reportBatchItemFailures: true\n", "    batchSize: 10\n    reportBatchItemFailures: true\n", RuleFIFOBatchOrder, SeverityWarning, 31,
			"FIFO batches of up to 10: a handler that goes on after a failed message processes the later messages of its group before it"},
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
				} else if tc.name != "undeclared dlq" && tc.name != "dlq type mismatch" &&
					!(fs[i].Rule == RuleFIFOBatchOrder && strings.HasSuffix(tc.name, "batch without partial failures")) {
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

// The head-of-line rule counts maxReceiveCount × visibility timeout, and
// notes it from 3 minutes: 179 s is below, 180 s (seed 000's enrichment
// queue, maxReceiveCount 1) is info, 15 min is still info, 15 min 1 s a
// warning.
func TestHeadOfLineThresholds(t *testing.T) {
	for _, tc := range []struct {
		visibility, maxReceive int
		want                   Severity // "" for no finding
	}{
		{179, 1, ""},
		{180, 1, SeverityInfo},
		{60, 3, SeverityInfo},
		{300, 3, SeverityInfo},
		{901, 1, SeverityWarning},
		{360, 3, SeverityWarning},
	} {
		text := "queues:\n  - name: q.fifo\n    fifo: true\n    visibilityTimeout: " + strconv.Itoa(tc.visibility) +
			"\n    redrivePolicy: {deadLetterQueue: q-dlq.fifo, maxReceiveCount: " + strconv.Itoa(tc.maxReceive) + "}\n" +
			"  - name: q-dlq.fifo\n    fifo: true\n    messageRetentionPeriod: 1209600\n" +
			"alarms:\n  - {name: a, queue: q-dlq.fifo, metric: ApproximateNumberOfMessagesVisible, threshold: 0}\n"
		var got Severity
		for _, f := range lintText(t, text) {
			if f.Rule == RuleHeadOfLine {
				got = f.Severity
			} else {
				t.Errorf("unexpected %s", f)
			}
		}
		if got != tc.want {
			t.Errorf("%d × %d s: severity %q, want %q", tc.maxReceive, tc.visibility, got, tc.want)
		}
	}
}

// A producer that sends straight to a DLQ (seed 002's send_to_dlq, for
// permanent failures) is not an unconsumed queue: info, explained, on the
// DLQ, whether the queue is a DLQ by a redrive policy, by its
// redriveAllowPolicy or by its name.
func TestDirectSendToDLQIsInfo(t *testing.T) {
	for _, tc := range []struct{ name, dlq, queues string }{
		{"redrive target", "mail-dlq", ""},
		{"redrive allow policy", "failures", "  - name: failures\n    redriveAllowPolicy: {redrivePermission: allowAll}\n"},
		{"named like one", "loader_42_dlq", "  - name: loader_42_dlq\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Replace(clean, "functions:\n", tc.queues+"functions:\n", 1)
			text = strings.Replace(text, "    produces: [orders.fifo, mail]\n", "    produces: [orders.fifo, mail, "+tc.dlq+"]\n", 1)
			dlq := tc.dlq
			fs := lintText(t, text)
			if len(fs) != 1 || fs[0].Rule != RuleDLQDirectSend || fs[0].Severity != SeverityInfo ||
				!strings.Contains(fs[0].Message, "dead-letter queue "+dlq+" is sent to directly by function producer") ||
				fs[0].Resource != "queues["+dlq+"]" || HasErrors(fs) {
				t.Errorf("findings: %v", fs)
			}
		})
	}
	// A queue that is not a DLQ and has no consumer is still an error.
	text := strings.Replace(clean, "functions:\n", "  - name: outbox\n    redrivePolicy: {deadLetterQueue: mail-dlq, maxReceiveCount: 3}\nfunctions:\n", 1)
	text = strings.Replace(text, "    produces: [orders.fifo, mail]\n", "    produces: [orders.fifo, mail, outbox]\n", 1)
	if fs := lintText(t, text); len(fs) != 1 || fs[0].Rule != RuleUnconsumedQueue || fs[0].Severity != SeverityError {
		t.Errorf("findings: %v", fs)
	}
}

// Every finding names its element: the tidemq.yaml key of the queue,
// trigger, function, topic or subscription, in text and JSON.
func TestFindingsNameTheirElement(t *testing.T) {
	text := strings.Replace(clean, "    reservedConcurrency: 10", "    reservedConcurrency: 5", 1) // TQ009 on the trigger
	text = strings.Replace(text, "  - name: mail-dlq-depth\n    queue: mail-dlq\n", "  - name: mail-dlq-depth\n    queue: nowhere\n", 1)
	text = strings.Replace(text, "    produces: [orders.fifo, mail]\n", "    produces: [orders.fifo, mail]\n    url: localhost:1\n", 1)
	text += "topics:\n  - name: events\n    subscriptions:\n      - {protocol: sqs, endpoint: orders.fifo}\n"
	want := map[string]string{
		RuleConcurrency:          "triggers[worker.orders.fifo]",
		RuleDLQAlarm:             "queues[mail-dlq]",
		RuleSubscriptionQueue:    "topics[events].subscriptions[sqs:orders.fifo]",
		RuleInvalidConfiguration: "",
	}
	fs := lintText(t, text)
	for _, f := range fs {
		w, ok := want[f.Rule]
		if !ok {
			t.Errorf("unexpected %s", f)
			continue
		}
		if w == "" { // two of them: the function's url and the alarm's queue
			if f.Resource != "functions[producer]" && f.Resource != "alarms[mail-dlq-depth]" {
				t.Errorf("%s: resource %q", f, f.Resource)
			}
		} else if f.Resource != w {
			t.Errorf("%s: resource %q, want %q", f, f.Resource, w)
		}
		if !strings.Contains(f.String(), ") "+f.Resource+": ") {
			t.Errorf("text does not name %q: %s", f.Resource, f)
		}
	}
	var b bytes.Buffer
	if err := WriteFindings(&b, "json", fs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"resource": "triggers[worker.orders.fifo]"`) {
		t.Errorf("json:\n%s", b.String())
	}
}

// TestFIFOBatchOrderWithoutPartialFailures: a FIFO event source with
// batches and no ReportBatchItemFailures gets TQ018 besides TQ002: the
// later messages of a group, already processed, come back with the failed
// one and are processed again after it.
func TestFIFOBatchOrderWithoutPartialFailures(t *testing.T) {
	fs := lintText(t, strings.Replace(clean, "    batchSize: 1\n    reportBatchItemFailures: true\n", "    batchSize: 5\n", 1))
	var got []string
	for _, f := range fs {
		got = append(got, f.Rule)
		if f.Rule == RuleFIFOBatchOrder && (f.Severity != SeverityWarning || f.Line != 31 ||
			!strings.Contains(f.Message, "on orders.fifo: FIFO batches of up to 5 without ReportBatchItemFailures: when one message fails the whole batch comes back")) {
			t.Errorf("TQ018: %s", f)
		}
	}
	if !slices.Equal(got, []string{RuleBatchItemFailures, RuleFIFOBatchOrder}) {
		t.Errorf("findings %v", fs)
	}
}

// A dead-letter queue given by the ARN of another account's queue is
// refused by SQS (and tidemq): an error, with the topology's account.
func TestLintDLQOfAnotherAccount(t *testing.T) {
	text := "version: 1\nqueues:\n  - name: orders\n    redrivePolicy: {deadLetterQueue: 'arn:aws:sqs:us-east-1:111122223333:orders-dlq', maxReceiveCount: 3}\n" +
		"  - name: mine\n    redrivePolicy: {deadLetterQueue: 'arn:aws:sqs:us-east-1:000000000000:mine-dlq', maxReceiveCount: 3}\n"
	var found []Finding
	for _, f := range lintText(t, text) {
		if f.Rule == RuleInvalidConfiguration {
			found = append(found, f)
		}
	}
	if len(found) != 1 || !strings.Contains(found[0].Message, "account 111122223333") || found[0].Line != 4 {
		t.Fatalf("findings %v, want one about orders' DLQ of account 111122223333 on line 4", found)
	}
}
