package topology

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/trigger"
)

// Severity of a finding. Errors make 'tidemq lint' exit 1.
type Severity string

// Severities, most severe first.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// Finding is one problem the linter found. Resource is the logical id of
// the element it is about: the template resource's logical id, or the
// element's key in a tidemq.yaml (see src.LogicalID).
type Finding struct {
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Resource string   `json:"resource"`
	Rule     string   `json:"rule"`
	Name     string   `json:"name"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	Hint     string   `json:"hint,omitempty"`
	// Suppressed is the suppression that silenced the finding, if one
	// did: it is shown, and does not count (see Suppression).
	Suppressed *Suppression `json:"suppressed,omitempty"`
}

func (f Finding) String() string {
	res := ""
	if f.Resource != "" {
		res = " " + f.Resource
	}
	sev := string(f.Severity)
	if f.Suppressed != nil {
		sev = "suppressed " + sev
	}
	s := fmt.Sprintf("%s:%d: %s %s (%s)%s: %s", f.File, f.Line, sev, f.Rule, f.Name, res, f.Message)
	if sp := f.Suppressed; sp != nil {
		s += "\n    suppressed (" + sp.Source + "): " + sp.Reason
	} else if f.Hint != "" {
		s += "\n    fix: " + f.Hint
	}
	return s
}

// Rule describes a lint rule.
type Rule struct {
	ID, Name    string
	Description string
}

// Thresholds of the rules. They are deliberately looser than AWS's advice
// where a team has reasons (seed 000 runs 60-second margins on purpose).
const (
	// MinVisibilityHeadroom is the least margin, in seconds, between a
	// queue's visibility timeout and its consumer's timeout; the margin
	// required is the larger of this and MinVisibilityHeadroomFraction of
	// the function timeout. AWS recommends 6x the function timeout, which
	// the linter mentions in its hint but does not enforce.
	MinVisibilityHeadroom         = 30
	MinVisibilityHeadroomFraction = 0.10
	// MinHeadOfLineStall and MaxHeadOfLineStall bound how long, in
	// seconds, a failing FIFO message blocks its group: it is received
	// maxReceiveCount times and each time stays in flight for the whole
	// visibility timeout (a failed invocation does not end it early),
	// so the messages behind it in its group wait maxReceiveCount ×
	// visibility timeout before it moves to the DLQ. From 3 minutes the
	// linter says so as info; above 15 minutes it warns.
	//
	// Why 3 minutes: seed 000 sets maxReceiveCount 1 on its FIFO queues
	// precisely to avoid head-of-line stalls, yet each failure still
	// holds its group for one visibility timeout — 180 s and 360 s
	// there. The shortest of those, 1 × 180 s, is a stall a team should
	// know it has (the message and hint say how to avoid it: the
	// consumer sends the message to the DLQ itself and deletes it), not
	// a mistake, hence info.
	MinHeadOfLineStall = 3 * 60
	MaxHeadOfLineStall = 15 * 60
)

// Rule ids.
const (
	RuleVisibilityTimeout    = "TQ001"
	RuleBatchItemFailures    = "TQ002"
	RuleDLQType              = "TQ003"
	RuleDLQRetention         = "TQ004"
	RuleUnconsumedQueue      = "TQ005"
	RuleDLQAlarm             = "TQ006"
	RuleMissingDLQ           = "TQ007"
	RuleHeadOfLine           = "TQ008"
	RuleConcurrency          = "TQ009"
	RuleContentDedup         = "TQ010"
	RuleEventSourceLimits    = "TQ011"
	RuleInvalidConfiguration = "TQ012"
	RuleFIFOTopicProtocol    = "TQ013"
	RuleFIFOTopicAttribute   = "TQ014"
	RuleSubscriptionDLQType  = "TQ015"
	RuleSubscriptionQueue    = "TQ016"
	RuleDLQDirectSend        = "TQ017"
	RuleFIFOBatchOrder       = "TQ018"
	RuleTriggerAccess        = "TQ019"
	RuleSubscriptionPolicy   = "TQ020"
	RuleDLQRedrive           = "TQ021"
	RuleResourcePolicy       = "TQ022"
)

// Rules lists every lint rule.
var Rules = []Rule{
	{RuleVisibilityTimeout, "visibility-timeout", "A queue's visibility timeout must exceed its consumer's timeout (error), by at least max(30 s, 10% of the timeout) (warning); otherwise a slow but successful invocation sees its message delivered again."},
	{RuleBatchItemFailures, "batch-item-failures", "An event source with a batch size above 1 (Lambda's default is 10) should declare ReportBatchItemFailures, or one failure returns the whole batch."},
	{RuleDLQType, "dlq-type", "A dead-letter queue must have its source's type: FIFO for FIFO, standard for standard."},
	{RuleDLQRetention, "dlq-retention", "A dead-letter queue should retain messages longer than its source: a standard queue keeps a message's original enqueue time, so it expires early in the DLQ."},
	{RuleUnconsumedQueue, "unconsumed-queue", "A queue that something produces to (a function's environment or policy, an SNS subscription) needs an enabled event source, or its messages expire unread after the retention period, with no DLQ entry."},
	{RuleDLQAlarm, "dlq-alarm", "A dead-letter queue should have an alarm on ApproximateNumberOfMessagesVisible, or failures go unnoticed."},
	{RuleMissingDLQ, "missing-dlq", "A queue that is not itself a dead-letter queue (the target of a redrive policy, with a redriveAllowPolicy, or named like one) should have a redrive policy."},
	{RuleHeadOfLine, "fifo-head-of-line", "On a FIFO queue a failing message blocks its group for maxReceiveCount × visibility timeout, even with maxReceiveCount 1: info from 3 minutes, warning above 15 minutes."},
	{RuleConcurrency, "concurrency", "An event source's MaximumConcurrency above the function's reserved concurrency can never be reached: the excess invocations are throttled."},
	{RuleContentDedup, "content-based-dedup", "Content-based deduplication hashes the body; whether bodies carry timestamps or other per-send values cannot be known statically."},
	{RuleEventSourceLimits, "event-source-limits", "Event source limits: BatchSize 1–10 on FIFO, 1–10000 on standard, over 10 only with MaximumBatchingWindowInSeconds ≥ 1; window 0–300; MaximumConcurrency 2–1000."},
	{RuleInvalidConfiguration, "invalid-configuration", "Queue names and attributes SQS would reject, references to queues that are not declared, and local function targets tidemq cannot run (a url and a command both, a url that is not http(s))."},
	{RuleFIFOTopicProtocol, "fifo-topic-protocol", "A FIFO topic delivers only to SQS: SNS and tidemq refuse an http or https subscription to it."},
	{RuleFIFOTopicAttribute, "fifo-topic-attribute", "ContentBasedDeduplication and FifoThroughputScope are FIFO topic attributes: SNS and tidemq refuse them on a standard topic, whatever their value."},
	{RuleSubscriptionDLQType, "subscription-dlq-type", "A subscription's dead-letter queue must have its topic's type: FIFO for a FIFO topic, standard for a standard topic."},
	{RuleSubscriptionQueue, "subscription-queue-type", "A FIFO queue cannot be subscribed to a standard topic (a FIFO topic may deliver to FIFO and standard queues)."},
	{RuleFIFOBatchOrder, "fifo-batch-order", "On a FIFO queue, an event source with a batch size above 1 lets a handler that goes on after a failed message process the later messages of its group before it (and, without ReportBatchItemFailures, process them again after it); the handler must stop at the first failure and list the rest in batchItemFailures. Suppress it once the handler does."},
	{RuleTriggerAccess, "trigger-access", "With a permissions file (--credentials-file): the principal a function runs as must be allowed sqs:ReceiveMessage, sqs:DeleteMessage and sqs:GetQueueAttributes on the queues it consumes and sqs:SendMessage on those it produces to."},
	{RuleSubscriptionPolicy, "subscription-policy", "With a permissions file: under --auth a topic delivers into a queue only when the queue's policy allows sns.amazonaws.com sqs:SendMessage for the topic's ARN (aws:SourceArn), as on AWS; otherwise every message is refused (dead-lettered or dropped)."},
	{RuleDLQRedrive, "dlq-redrive", "With a permissions file: some principal should be allowed to redrive a dead-letter queue (sqs:StartMessageMoveTask or tidemq:Redrive on it), or its messages can only expire."},
	{RuleResourcePolicy, "resource-policy", "With a permissions file: a queue's or topic's policy must parse and use only conditions tidemq evaluates; otherwise it denies every call it applies to (and everything to other accounts), whatever it says."},
	{RuleDLQDirectSend, "dlq-direct-send", "A producer that sends straight to a dead-letter queue (a consumer routing a permanent failure there itself) is a known pattern, not an error: nothing needs to read a DLQ. Info only, so that the DLQ's alarm and retention are looked at."},
}

func ruleName(id string) string {
	for _, r := range Rules {
		if r.ID == id {
			return r.Name
		}
	}
	return id
}

type linter struct {
	c        *Config
	findings []Finding
	// account is the topology's account (LintOptions.AccountID, else
	// tidemq.DefaultAccountID): the account of its queues' ARNs.
	account string
}

func (l *linter) add(s *src, field, rule string, sev Severity, hint, format string, args ...any) {
	l.findings = append(l.findings, Finding{File: l.c.File, Line: s.LineOf(field), Resource: s.LogicalID, Rule: rule, Name: ruleName(rule),
		Severity: sev, Message: fmt.Sprintf(format, args...), Hint: hint})
}

// Lint checks a topology and returns its findings, ordered by line.
func Lint(c *Config) []Finding { return LintWith(c, LintOptions{}) }

// LintWith is Lint with the permissions checks of o (lint_access.go).
func LintWith(c *Config, o LintOptions) []Finding {
	l := &linter{c: c, account: o.AccountID}
	if l.account == "" {
		l.account = tidemq.DefaultAccountID
	}
	l.checkSuppressions()
	dlqs := map[string][]*Queue{} // DLQ name → its sources
	seen := map[string]bool{}
	for _, q := range c.Queues {
		l.checkQueue(q, seen)
		if r := q.RedrivePolicy; r != nil {
			dlqs[queueName(r.DeadLetterQueue)] = append(dlqs[queueName(r.DeadLetterQueue)], q)
		}
	}
	consumers := map[string][]*Trigger{}
	for _, t := range c.Triggers {
		l.checkTrigger(t)
		consumers[queueName(t.Queue)] = append(consumers[queueName(t.Queue)], t)
	}
	producers := map[string][]string{}
	for _, f := range c.Functions {
		l.checkFunction(f)
	}
	for _, tp := range c.Topics {
		l.checkTopic(tp)
	}
	for _, f := range c.Functions {
		for _, q := range f.Produces {
			producers[queueName(q)] = append(producers[queueName(q)], "function "+f.Name)
		}
	}
	for _, tp := range c.Topics {
		for _, s := range tp.Subscriptions {
			if s.Protocol == "sqs" {
				producers[queueName(s.Endpoint)] = append(producers[queueName(s.Endpoint)], "topic "+tp.Name)
			}
		}
	}
	alarmed := map[string]bool{}
	for _, a := range c.Alarms {
		if c.Queue(queueName(a.Queue)) == nil {
			l.add(&a.src, "queue", RuleInvalidConfiguration, SeverityWarning, "name a queue declared in this topology",
				"alarm %s watches queue %q, which is not declared", a.Name, a.Queue)
		}
		if a.Metric == "ApproximateNumberOfMessagesVisible" {
			alarmed[queueName(a.Queue)] = true
		}
	}
	for _, q := range c.Queues {
		sources := dlqs[q.Name]
		if q.RedrivePolicy != nil {
			l.checkRedrive(q)
		} else if !isDLQ(q, sources) {
			l.add(&q.src, "name", RuleMissingDLQ, SeverityWarning,
				"add a redrivePolicy with a dead-letter queue of the same type (or a redriveAllowPolicy if this queue is itself meant as a DLQ)",
				"queue %s has no dead-letter queue: a message that always fails is retried until it expires", q.Name)
		}
		if len(sources) > 0 && !alarmed[q.Name] {
			names := make([]string, len(sources))
			for i, s := range sources {
				names[i] = s.Name
			}
			l.add(&q.src, "name", RuleDLQAlarm, SeverityWarning,
				"add an alarm on ApproximateNumberOfMessagesVisible > 0 for this queue",
				"dead-letter queue %s (of %s) has no alarm on its depth: failures land here unnoticed", q.Name, strings.Join(names, ", "))
		}
		if p := producers[q.Name]; len(p) > 0 && isDLQ(q, sources) {
			l.add(&q.src, "name", RuleDLQDirectSend, SeverityInfo,
				"keep an alarm on this queue's ApproximateNumberOfMessagesVisible; if it is not meant as a dead-letter queue, give it an event source",
				"dead-letter queue %s is sent to directly by %s (a consumer routing permanent failures straight to the DLQ): that needs no consumer — the messages wait there for inspection and 'tidemq dlq redrive' for its %s retention period",
				q.Name, strings.Join(p, ", "), duration(q.Retention()))
		} else if len(p) > 0 {
			enabled, disabled := 0, 0
			for _, t := range consumers[q.Name] {
				if t.IsEnabled() {
					enabled++
				} else {
					disabled++
				}
			}
			if enabled == 0 {
				why := "no event source reads it"
				if disabled > 0 {
					why = "its event source is disabled"
				}
				l.add(&q.src, "name", RuleUnconsumedQueue, SeverityError,
					"add (or enable) an event source for this queue; until then watch ApproximateNumberOfMessagesVisible and ApproximateAgeOfOldestMessage",
					"queue %s has producers (%s) but %s: messages expire after the %s retention period, with no DLQ entry",
					q.Name, strings.Join(p, ", "), why, duration(q.Retention()))
			}
		}
	}
	if o.Permissions != nil {
		l.checkAccess(o, dlqs)
	}
	l.suppress()
	sort.SliceStable(l.findings, func(i, j int) bool {
		if l.findings[i].Line != l.findings[j].Line {
			return l.findings[i].Line < l.findings[j].Line
		}
		return l.findings[i].Rule < l.findings[j].Rule
	})
	return l.findings
}

func (l *linter) checkQueue(q *Queue, seen map[string]bool) {
	if seen[q.Name] {
		l.add(&q.src, "name", RuleInvalidConfiguration, SeverityError, "give each queue a unique name", "queue %s is declared twice", q.Name)
	}
	seen[q.Name] = true
	if err := tidemq.ValidateQueueName(q.Name, q.FIFO); err != nil {
		l.add(&q.src, "name", RuleInvalidConfiguration, SeverityError, "queue names are 1–80 characters of A-Z a-z 0-9 _ -, and FIFO names end in .fifo",
			"queue name %q: %s", q.Name, errMessage(err))
	}
	fakeARN := func(n string) string { return tidemq.QueueARN(tidemq.DefaultRegion, l.account, n) }
	if _, err := tidemq.ValidateQueueAttributes(q.Attributes(fakeARN), q.FIFO, true); err != nil {
		l.add(&q.src, "name", RuleInvalidConfiguration, SeverityError, "see the SQS limits (reference §4)", "queue %s: %s", q.Name, errMessage(err))
	}
	if q.ContentBasedDeduplication != nil && *q.ContentBasedDeduplication {
		l.add(&q.src, "contentBasedDeduplication", RuleContentDedup, SeverityWarning,
			"if bodies carry timestamps, request ids or other per-send values, turn it off and have producers send a MessageDeduplicationId",
			"queue %s deduplicates by a hash of the body; whether two logically identical messages have identical bodies (no timestamps, no per-send ids) cannot be known statically", q.Name)
	}
}

func (l *linter) checkRedrive(q *Queue) {
	r := q.RedrivePolicy
	dlq := l.c.Queue(queueName(r.DeadLetterQueue))
	if dlq == nil {
		a, isARN := tidemq.ParseARN(r.DeadLetterQueue)
		switch {
		case !isARN:
			l.add(&q.src, "redrivePolicy.deadLetterQueue", RuleInvalidConfiguration, SeverityError,
				"declare the dead-letter queue, or give its ARN", "queue %s sends failures to %s, which is not declared", q.Name, r.DeadLetterQueue)
		case a.Service == "sqs" && a.Account != l.account:
			l.add(&q.src, "redrivePolicy.deadLetterQueue", RuleInvalidConfiguration, SeverityError,
				"use a dead-letter queue of the queue's own account "+l.account,
				"queue %s sends failures to a queue of account %s: SQS (and tidemq) refuse a dead-letter queue of another account (Dead-letter target owner should be same as the source)", q.Name, a.Account)
		}
		return
	}
	if dlq.FIFO != q.FIFO {
		l.add(&q.src, "redrivePolicy.deadLetterQueue", RuleDLQType, SeverityError,
			"use a dead-letter queue of the same type as its source", "queue %s is %s but its dead-letter queue %s is %s: SQS rejects the redrive policy",
			q.Name, kind(q.FIFO), dlq.Name, kind(dlq.FIFO))
	}
	if dlq.Retention() < q.Retention() {
		sev := SeverityWarning
		why := "a standard queue keeps each message's original enqueue time, so messages expire in the DLQ earlier than its retention suggests"
		if q.FIFO {
			sev = SeverityInfo
			why = "a FIFO DLQ restarts the retention clock on arrival, but it still keeps failures for less time than the source keeps messages"
		}
		l.add(&dlq.src, "messageRetentionPeriod", RuleDLQRetention, sev,
			fmt.Sprintf("set the DLQ's messageRetentionPeriod to at least %d (the maximum is %d, 14 days)", q.Retention(), tidemq.MaxRetentionPeriod),
			"dead-letter queue %s retains for %s, less than its source %s (%s): %s", dlq.Name, duration(dlq.Retention()), q.Name, duration(q.Retention()), why)
	}
	if q.FIFO {
		stall := r.MaxReceiveCount * q.Visibility()
		sev, why := SeverityInfo, fmt.Sprintf("noted from %s", duration(MinHeadOfLineStall))
		if stall > MaxHeadOfLineStall {
			sev, why = SeverityWarning, fmt.Sprintf("above the %s the linter accepts", duration(MaxHeadOfLineStall))
		}
		if stall >= MinHeadOfLineStall {
			l.add(&q.src, "redrivePolicy.maxReceiveCount", RuleHeadOfLine, sev,
				"to fail fast, have the consumer send a message that cannot succeed to the DLQ itself and delete it; or lower maxReceiveCount or the visibility timeout (keeping it above the consumer's timeout); or accept the stall knowingly",
				"a failing message blocks its FIFO group for up to %d × %d s = %s before it moves to the DLQ: it stays in flight for the whole visibility timeout after each failed receive, and the group's later messages wait behind it (%s)",
				r.MaxReceiveCount, q.Visibility(), duration(stall), why)
		}
	}
}

// checkFunction checks what stands for a function locally.
func (l *linter) checkFunction(f *Function) {
	if f.URL != "" && len(f.Command) > 0 {
		l.add(&f.src, "command", RuleInvalidConfiguration, SeverityError, "keep either the url or the command",
			"function %s has both a url and a command: a trigger has one target", f.Name)
	}
	if f.URL != "" && !strings.HasPrefix(f.URL, "http://") && !strings.HasPrefix(f.URL, "https://") {
		l.add(&f.src, "url", RuleInvalidConfiguration, SeverityError, "write the URL with its scheme, like http://127.0.0.1:8080/",
			"function %s: url %q is not an http:// or https:// URL", f.Name, f.URL)
	}
}

func (l *linter) checkTrigger(t *Trigger) {
	q := l.c.Queue(queueName(t.Queue))
	if q == nil {
		if _, isARN := tidemq.ParseARN(t.Queue); !isARN {
			l.add(&t.src, "queue", RuleInvalidConfiguration, SeverityError, "declare the queue, or give its ARN",
				"the event source of %s reads queue %s, which is not declared", t.Function, t.Queue)
		}
	}
	f := l.c.Function(t.Function)
	batch := t.EffectiveBatchSize()
	window := intOr(t.MaximumBatchingWindowInSeconds, 0)
	if batch > 1 && !t.ReportBatchItemFailures {
		field := "batchSize"
		note := ""
		if t.BatchSize == nil {
			field, note = "queue", " (Lambda's default)"
		}
		l.add(&t.src, field, RuleBatchItemFailures, SeverityWarning,
			"add FunctionResponseTypes: [ReportBatchItemFailures] and return batchItemFailures from the handler",
			"the event source of %s takes batches of %d%s without ReportBatchItemFailures: one failure returns the whole batch to the queue", t.Function, batch, note)
	}
	if q != nil && q.FIFO && batch <= 10 {
		if risk := trigger.FIFOBatchOrderRisk(batch, t.ReportBatchItemFailures); risk != "" {
			field := "batchSize"
			if t.BatchSize == nil {
				field = "queue"
			}
			l.add(&t.src, field, RuleFIFOBatchOrder, SeverityWarning,
				"stop at the first failure and return it and every later message as batchItemFailures, then suppress TQ018 for this event source; or use BatchSize 1",
				"the event source of %s on %s: %s", t.Function, q.Name, risk)
		}
	}
	limit := func(field, hint, format string, args ...any) {
		l.add(&t.src, field, RuleEventSourceLimits, SeverityError, hint, format, args...)
	}
	switch {
	case batch < 1:
		limit("batchSize", "use a batch size of at least 1", "batch size %d is below 1", batch)
	case q != nil && q.FIFO && batch > 10:
		limit("batchSize", "use a batch size of at most 10 on a FIFO queue", "batch size %d on FIFO queue %s: FIFO event sources take at most 10", batch, q.Name)
	case batch > 10000:
		limit("batchSize", "use a batch size of at most 10000", "batch size %d is above the standard-queue maximum of 10000", batch)
	case batch > 10 && window < 1:
		limit("batchSize", "set MaximumBatchingWindowInSeconds to at least 1", "batch size %d needs MaximumBatchingWindowInSeconds ≥ 1 (it is %d): Lambda rejects the mapping", batch, window)
	}
	if window < 0 || window > 300 {
		limit("maximumBatchingWindowInSeconds", "use 0–300 seconds", "MaximumBatchingWindowInSeconds %d is outside 0–300", window)
	}
	if mc := t.MaximumConcurrency; mc != nil && (*mc < 2 || *mc > 1000) {
		limit("maximumConcurrency", "use 2–1000", "MaximumConcurrency %d is outside 2–1000", *mc)
	}
	if f == nil {
		return
	}
	if mc, rc := t.MaximumConcurrency, f.ReservedConcurrency; mc != nil && rc != nil && *mc > *rc {
		l.add(&t.src, "maximumConcurrency", RuleConcurrency, SeverityWarning,
			fmt.Sprintf("lower MaximumConcurrency to %d or raise the function's reserved concurrency", *rc),
			"the event source of %s allows %d concurrent invocations but the function reserves only %d: the rest are throttled and messages return to the queue", f.Name, *mc, *rc)
	}
	if q == nil {
		return
	}
	vis, timeout := q.Visibility(), f.EffectiveTimeout()
	need := max(MinVisibilityHeadroom, int(float64(timeout)*MinVisibilityHeadroomFraction+0.5))
	switch {
	case vis <= timeout:
		l.add(&q.src, "visibilityTimeout", RuleVisibilityTimeout, SeverityError,
			fmt.Sprintf("raise the visibility timeout to at least %d s (AWS recommends 6 × the function timeout, %d s)", timeout+need, 6*timeout),
			"queue %s has a visibility timeout of %d s, not above the %d s timeout of its consumer %s: a slow invocation's message is delivered again mid-flight",
			q.Name, vis, timeout, f.Name)
	case vis-timeout < need:
		l.add(&q.src, "visibilityTimeout", RuleVisibilityTimeout, SeverityWarning,
			fmt.Sprintf("raise the visibility timeout to at least %d s (AWS recommends 6 × the function timeout, %d s)", timeout+need, 6*timeout),
			"queue %s leaves only %d s between its %d s visibility timeout and the %d s timeout of its consumer %s (the linter asks for %d s)",
			q.Name, vis-timeout, vis, timeout, f.Name, need)
	}
}

// isDLQ reports whether a queue is a dead-letter queue: some queue of
// the topology sends its failures there, it declares which queues may,
// or it is named like one (tidemq's definition, see
// tidemq.NamedLikeDeadLetterQueue).
func isDLQ(q *Queue, sources []*Queue) bool {
	return len(sources) > 0 || q.RedriveAllowPolicy != nil || tidemq.NamedLikeDeadLetterQueue(q.Name)
}

func kind(fifo bool) string {
	if fifo {
		return "FIFO"
	}
	return "standard"
}

func errMessage(err error) string {
	if e := tidemq.AsError(err); e != nil {
		return e.Message
	}
	return err.Error()
}

// duration renders seconds as a short human duration: "4 days", "18 min".
func duration(s int) string {
	switch {
	case s%86400 == 0 && s >= 86400:
		if s == 86400 {
			return "1 day"
		}
		return fmt.Sprintf("%d days", s/86400)
	case s%3600 == 0 && s >= 3600:
		return fmt.Sprintf("%d h", s/3600)
	case s%60 == 0 && s >= 60:
		return fmt.Sprintf("%d min", s/60)
	}
	return fmt.Sprintf("%d s", s)
}

// HasErrors reports whether any finding is an error.
func HasErrors(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == SeverityError && f.Suppressed == nil {
			return true
		}
	}
	return false
}
