// Package topology is tidemq's topology as code: a declarative model of
// queues (every SQS attribute, redrive policies, tags), SNS topics and
// subscriptions, consumers (functions and their event source mappings, the
// "triggers") and CloudWatch-style alarms, read from a tidemq.yaml or
// imported from a CloudFormation/SAM template; lint rules over that model;
// and an applier that makes a running tidemq (or AWS, for what AWS shares
// with it) match the model: queues over the SQS API or a tidemq.Broker;
// topics and subscriptions over the SNS API or an sns.Service; triggers
// (event sources whose function has a local stand-in, a URL or a command)
// over the /tidemq/triggers admin API or a trigger.Manager; queue alarms as
// per-queue overrides of the built-in alarms.
package topology

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"

	"github.com/goccy/go-yaml"

	"github.com/tidemq/tidemq"
)

// Config is a whole topology: the contents of a tidemq.yaml.
type Config struct {
	Version   int         `yaml:"version" json:"version"`
	Queues    []*Queue    `yaml:"queues,omitempty" json:"queues,omitempty"`
	Topics    []*Topic    `yaml:"topics,omitempty" json:"topics,omitempty"`
	Functions []*Function `yaml:"functions,omitempty" json:"functions,omitempty"`
	Triggers  []*Trigger  `yaml:"triggers,omitempty" json:"triggers,omitempty"`
	Alarms    []*Alarm    `yaml:"alarms,omitempty" json:"alarms,omitempty"`
	// Lint holds the lint suppressions (see Suppression).
	Lint *LintSettings `yaml:"lint,omitempty" json:"lint,omitempty"`
	File string        `yaml:"-" json:"-"` // where the config was read from, for findings
}

// Queue is one SQS queue. Nil pointers and empty strings mean "the SQS
// default" (reference §4).
type Queue struct {
	Name                          string              `yaml:"name" json:"name"`
	FIFO                          bool                `yaml:"fifo,omitempty" json:"fifo,omitempty"`
	VisibilityTimeout             *int                `yaml:"visibilityTimeout,omitempty" json:"visibilityTimeout,omitempty"`
	MessageRetentionPeriod        *int                `yaml:"messageRetentionPeriod,omitempty" json:"messageRetentionPeriod,omitempty"`
	MaximumMessageSize            *int                `yaml:"maximumMessageSize,omitempty" json:"maximumMessageSize,omitempty"`
	DelaySeconds                  *int                `yaml:"delaySeconds,omitempty" json:"delaySeconds,omitempty"`
	ReceiveMessageWaitTimeSeconds *int                `yaml:"receiveMessageWaitTimeSeconds,omitempty" json:"receiveMessageWaitTimeSeconds,omitempty"`
	ContentBasedDeduplication     *bool               `yaml:"contentBasedDeduplication,omitempty" json:"contentBasedDeduplication,omitempty"`
	DeduplicationScope            string              `yaml:"deduplicationScope,omitempty" json:"deduplicationScope,omitempty"`
	FifoThroughputLimit           string              `yaml:"fifoThroughputLimit,omitempty" json:"fifoThroughputLimit,omitempty"`
	KmsMasterKeyID                string              `yaml:"kmsMasterKeyId,omitempty" json:"kmsMasterKeyId,omitempty"`
	KmsDataKeyReusePeriodSeconds  *int                `yaml:"kmsDataKeyReusePeriodSeconds,omitempty" json:"kmsDataKeyReusePeriodSeconds,omitempty"`
	SqsManagedSseEnabled          *bool               `yaml:"sqsManagedSseEnabled,omitempty" json:"sqsManagedSseEnabled,omitempty"`
	Policy                        string              `yaml:"policy,omitempty" json:"policy,omitempty"` // an IAM policy document, as JSON text
	RedrivePolicy                 *RedrivePolicy      `yaml:"redrivePolicy,omitempty" json:"redrivePolicy,omitempty"`
	RedriveAllowPolicy            *RedriveAllowPolicy `yaml:"redriveAllowPolicy,omitempty" json:"redriveAllowPolicy,omitempty"`
	Tags                          map[string]string   `yaml:"tags,omitempty" json:"tags,omitempty"`
	src                           `yaml:"-" json:"-"`
}

// RedrivePolicy sends a message to DeadLetterQueue (a queue name of this
// topology, or an SQS ARN) after MaxReceiveCount receives.
type RedrivePolicy struct {
	DeadLetterQueue string `yaml:"deadLetterQueue" json:"deadLetterQueue"`
	MaxReceiveCount int    `yaml:"maxReceiveCount" json:"maxReceiveCount"`
}

// RedriveAllowPolicy says which queues may use this one as their DLQ.
// SourceQueues are queue names of this topology or SQS ARNs.
type RedriveAllowPolicy struct {
	RedrivePermission string   `yaml:"redrivePermission" json:"redrivePermission"`
	SourceQueues      []string `yaml:"sourceQueues,omitempty" json:"sourceQueues,omitempty"`
}

// Topic is an SNS topic and its subscriptions. Attributes left empty are
// left as the target has them (SNS's defaults for a new topic).
type Topic struct {
	Name                      string            `yaml:"name" json:"name"`
	FIFO                      bool              `yaml:"fifo,omitempty" json:"fifo,omitempty"`
	DisplayName               string            `yaml:"displayName,omitempty" json:"displayName,omitempty"`
	ContentBasedDeduplication *bool             `yaml:"contentBasedDeduplication,omitempty" json:"contentBasedDeduplication,omitempty"` // FIFO only
	FifoThroughputScope       string            `yaml:"fifoThroughputScope,omitempty" json:"fifoThroughputScope,omitempty"`             // FIFO only: Topic or MessageGroup
	SignatureVersion          string            `yaml:"signatureVersion,omitempty" json:"signatureVersion,omitempty"`                   // "1" or "2"
	KmsMasterKeyID            string            `yaml:"kmsMasterKeyId,omitempty" json:"kmsMasterKeyId,omitempty"`
	TracingConfig             string            `yaml:"tracingConfig,omitempty" json:"tracingConfig,omitempty"`
	Policy                    string            `yaml:"policy,omitempty" json:"policy,omitempty"`                 // JSON text
	DeliveryPolicy            string            `yaml:"deliveryPolicy,omitempty" json:"deliveryPolicy,omitempty"` // JSON text
	Tags                      map[string]string `yaml:"tags,omitempty" json:"tags,omitempty"`
	Subscriptions             []*Subscription   `yaml:"subscriptions,omitempty" json:"subscriptions,omitempty"`
	src                       `yaml:"-" json:"-"`
}

// Subscription delivers a topic's messages. For protocol sqs, Endpoint is
// a queue name of this topology (or an ARN). A subscription is identified
// by its topic, protocol and endpoint.
type Subscription struct {
	Protocol           string `yaml:"protocol" json:"protocol"`
	Endpoint           string `yaml:"endpoint" json:"endpoint"`
	RawMessageDelivery bool   `yaml:"rawMessageDelivery,omitempty" json:"rawMessageDelivery,omitempty"`
	FilterPolicy       string `yaml:"filterPolicy,omitempty" json:"filterPolicy,omitempty"` // JSON text
	// FilterPolicyScope is MessageAttributes (the default) or MessageBody.
	FilterPolicyScope string                     `yaml:"filterPolicyScope,omitempty" json:"filterPolicyScope,omitempty"`
	RedrivePolicy     *SubscriptionRedrivePolicy `yaml:"redrivePolicy,omitempty" json:"redrivePolicy,omitempty"`
	src               `yaml:"-" json:"-"`
}

// SubscriptionRedrivePolicy is where SNS puts messages it could not
// deliver: a queue name of this topology, or an SQS ARN.
type SubscriptionRedrivePolicy struct {
	DeadLetterQueue string `yaml:"deadLetterQueue" json:"deadLetterQueue"`
}

// Function is a consumer or producer of queues (a Lambda function in a
// template). Timeout is in seconds (Lambda's default is 3).
//
// URL or Command (not both) say what stands for the function locally: the
// event sources of a function that has one become tidemq triggers that POST
// the Lambda SQS event to URL, or run Command with the event on its
// standard input. A function without either is data for the linter only.
type Function struct {
	Name                string `yaml:"name" json:"name"`
	Timeout             *int   `yaml:"timeout,omitempty" json:"timeout,omitempty"`
	ReservedConcurrency *int   `yaml:"reservedConcurrency,omitempty" json:"reservedConcurrency,omitempty"`
	// Principal names the principal of the credentials file whose keys
	// the function's code uses ("" when it is not said): with a
	// permissions file, lint checks it may consume and produce.
	Principal string   `yaml:"principal,omitempty" json:"principal,omitempty"`
	Produces  []string `yaml:"produces,omitempty" json:"produces,omitempty"` // queue names it sends to
	// URL is an http:// or https:// endpoint that receives each batch.
	URL string `yaml:"url,omitempty" json:"url,omitempty"`
	// Headers are added to every POST to URL.
	Headers map[string]string `yaml:"headers,omitempty" json:"headers,omitempty"`
	// Command is a program and its arguments, run once per batch (the
	// server must allow command triggers).
	Command []string `yaml:"command,omitempty" json:"command,omitempty"`
	// Dir is the command's working directory.
	Dir string `yaml:"dir,omitempty" json:"dir,omitempty"`
	// Runtime, Handler and CodeUri are the function's own code. When it
	// has no URL or Command, tidemq runs that code for its event sources
	// through the Lambda Runtime API (see trigger.Function): a runtime of
	// provided.al2023, provided.al2, provided, go1.x or python3.x, whose
	// code is in CodeUri, a directory relative to the file that declares
	// it. The server must allow command triggers.
	Runtime string `yaml:"runtime,omitempty" json:"runtime,omitempty"`
	Handler string `yaml:"handler,omitempty" json:"handler,omitempty"`
	CodeUri string `yaml:"codeUri,omitempty" json:"codeUri,omitempty"`
	// MemorySize is in MB (Lambda's default is 128).
	MemorySize *int `yaml:"memorySize,omitempty" json:"memorySize,omitempty"`
	// Environment are the function's variables (secrets: tidemq shows
	// them redacted).
	Environment map[string]string `yaml:"environment,omitempty" json:"environment,omitempty"`
	// buildID is the function's logical id in a template: `sam build`
	// puts its built code in .aws-sam/build/<buildID>.
	buildID string
	src     `yaml:"-" json:"-"`
}

// HasLocalTarget reports whether the function has a URL or a Command.
func (f *Function) HasLocalTarget() bool { return f.URL != "" || len(f.Command) > 0 }

// Trigger is an event source mapping: Function consumes Queue. Nil fields
// take Lambda's defaults: BatchSize 10, window 0, enabled. Name is the
// trigger's name on tidemq; by default it is made of the function and the
// queue (see TriggerName).
type Trigger struct {
	Name                           string `yaml:"name,omitempty" json:"name,omitempty"`
	Queue                          string `yaml:"queue" json:"queue"`
	Function                       string `yaml:"function" json:"function"`
	BatchSize                      *int   `yaml:"batchSize,omitempty" json:"batchSize,omitempty"`
	MaximumBatchingWindowInSeconds *int   `yaml:"maximumBatchingWindowInSeconds,omitempty" json:"maximumBatchingWindowInSeconds,omitempty"`
	ReportBatchItemFailures        bool   `yaml:"reportBatchItemFailures,omitempty" json:"reportBatchItemFailures,omitempty"`
	MaximumConcurrency             *int   `yaml:"maximumConcurrency,omitempty" json:"maximumConcurrency,omitempty"`
	Enabled                        *bool  `yaml:"enabled,omitempty" json:"enabled,omitempty"`
	src                            `yaml:"-" json:"-"`
}

// Alarm watches one metric of one queue (AWS/SQS namespace names).
type Alarm struct {
	Name               string  `yaml:"name" json:"name"`
	Queue              string  `yaml:"queue" json:"queue"`
	Metric             string  `yaml:"metric" json:"metric"`
	Statistic          string  `yaml:"statistic,omitempty" json:"statistic,omitempty"`
	ComparisonOperator string  `yaml:"comparisonOperator,omitempty" json:"comparisonOperator,omitempty"`
	Threshold          float64 `yaml:"threshold" json:"threshold"`
	Period             int     `yaml:"period,omitempty" json:"period,omitempty"`
	EvaluationPeriods  int     `yaml:"evaluationPeriods,omitempty" json:"evaluationPeriods,omitempty"`
	src                `yaml:"-" json:"-"`
}

// src is where an element was declared: its line, and the lines of its
// fields (dotted paths such as "redrivePolicy.maxReceiveCount"), in the
// tidemq.yaml or in the template it was imported from; and its logical id,
// by which findings name it.
type src struct {
	Line int `yaml:"-" json:"-"`
	// LogicalID names the element in its file: the logical id of the
	// template resource it was imported from (CrmSyncQueue; an SQS
	// event of a SAM function is MyFunction.Events.MyEvent), or its key
	// in a tidemq.yaml, the section and the element's name
	// (queues[orders.fifo], topics[events].subscriptions[sqs:mail],
	// triggers[worker.orders]).
	LogicalID string         `yaml:"-" json:"-"`
	lines     map[string]int `yaml:"-" json:"-"`
}

// LineOf returns the line of a field, falling back to the nearest declared
// parent field and then to the element itself.
func (s *src) LineOf(field string) int {
	for f := field; f != ""; {
		if l, ok := s.lines[f]; ok && l > 0 {
			return l
		}
		i := bytes.LastIndexByte([]byte(f), '.')
		if i < 0 {
			break
		}
		f = f[:i]
	}
	return s.Line
}

func (s *src) setLine(field string, line int) {
	if line <= 0 {
		return
	}
	if s.lines == nil {
		s.lines = map[string]int{}
	}
	s.lines[field] = line
}

// Enabled reports whether the trigger is enabled (the default).
func (t *Trigger) IsEnabled() bool { return t.Enabled == nil || *t.Enabled }

// EffectiveBatchSize is BatchSize, or Lambda's default of 10.
func (t *Trigger) EffectiveBatchSize() int {
	if t.BatchSize == nil {
		return 10
	}
	return *t.BatchSize
}

// EffectiveTimeout is the function timeout, or Lambda's default of 3 s.
func (f *Function) EffectiveTimeout() int {
	if f.Timeout == nil {
		return 3
	}
	return *f.Timeout
}

// Visibility is the queue's visibility timeout, or the SQS default.
func (q *Queue) Visibility() int { return intOr(q.VisibilityTimeout, tidemq.DefaultVisibilityTimeout) }

// Retention is the queue's retention period, or the SQS default.
func (q *Queue) Retention() int {
	return intOr(q.MessageRetentionPeriod, tidemq.DefaultRetentionPeriod)
}

func intOr(p *int, d int) int {
	if p == nil {
		return d
	}
	return *p
}

// Queue returns the queue with the given name, or nil.
func (c *Config) Queue(name string) *Queue {
	for _, q := range c.Queues {
		if q.Name == name {
			return q
		}
	}
	return nil
}

// Function returns the function with the given name, or nil.
func (c *Config) Function(name string) *Function {
	for _, f := range c.Functions {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// Attributes renders the queue's settable SQS attributes (only those it
// sets). Redrive targets and allowed sources that are queue names are
// turned into ARNs with arnOf.
func (q *Queue) Attributes(arnOf func(name string) string) map[string]string {
	a := map[string]string{}
	setInt := func(k string, p *int) {
		if p != nil {
			a[k] = strconv.Itoa(*p)
		}
	}
	setBool := func(k string, p *bool) {
		if p != nil {
			a[k] = strconv.FormatBool(*p)
		}
	}
	setStr := func(k, v string) {
		if v != "" {
			a[k] = v
		}
	}
	if q.FIFO {
		a[tidemq.AttrFifoQueue] = "true"
	}
	setInt(tidemq.AttrVisibilityTimeout, q.VisibilityTimeout)
	setInt(tidemq.AttrMessageRetentionPeriod, q.MessageRetentionPeriod)
	setInt(tidemq.AttrMaximumMessageSize, q.MaximumMessageSize)
	setInt(tidemq.AttrDelaySeconds, q.DelaySeconds)
	setInt(tidemq.AttrReceiveMessageWaitTimeSeconds, q.ReceiveMessageWaitTimeSeconds)
	setInt(tidemq.AttrKmsDataKeyReusePeriodSeconds, q.KmsDataKeyReusePeriodSeconds)
	setBool(tidemq.AttrContentBasedDeduplication, q.ContentBasedDeduplication)
	setBool(tidemq.AttrSqsManagedSseEnabled, q.SqsManagedSseEnabled)
	setStr(tidemq.AttrDeduplicationScope, q.DeduplicationScope)
	setStr(tidemq.AttrFifoThroughputLimit, q.FifoThroughputLimit)
	setStr(tidemq.AttrKmsMasterKeyID, q.KmsMasterKeyID)
	setStr(tidemq.AttrPolicy, q.Policy)
	if r := q.RedrivePolicy; r != nil {
		a[tidemq.AttrRedrivePolicy] = tidemq.RedrivePolicy{DeadLetterTargetARN: toARN(r.DeadLetterQueue, arnOf), MaxReceiveCount: r.MaxReceiveCount}.String()
	}
	if r := q.RedriveAllowPolicy; r != nil {
		p := tidemq.RedriveAllowPolicy{RedrivePermission: r.RedrivePermission}
		for _, s := range r.SourceQueues {
			p.SourceQueueARNs = append(p.SourceQueueARNs, toARN(s, arnOf))
		}
		a[tidemq.AttrRedriveAllowPolicy] = p.String()
	}
	return a
}

func toARN(nameOrARN string, arnOf func(string) string) string {
	if _, ok := tidemq.ParseARN(nameOrARN); ok || arnOf == nil {
		return nameOrARN
	}
	return arnOf(nameOrARN)
}

// queueName returns the queue name in a queue name or an SQS ARN.
func queueName(nameOrARN string) string {
	if a, ok := tidemq.ParseARN(nameOrARN); ok {
		return a.Resource
	}
	return nameOrARN
}

// Load reads a tidemq.yaml, or imports a CloudFormation/SAM template if the
// file is one (it has a Resources section or an AWSTemplateFormatVersion).
// The report is nil for a tidemq.yaml.
func Load(path string, opts ImportOptions) (*Config, *ImportReport, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	root, err := parseTree(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if IsTemplate(root) {
		c, rep, err := importTree(root, opts)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		c.File = path
		return c, rep, nil
	}
	c, err := parseConfig(data, root)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	c.File = path
	return c, nil, nil
}

// IsTemplate reports whether a parsed document is a CloudFormation template.
func IsTemplate(root *node) bool {
	return root.get("Resources") != nil || root.get("AWSTemplateFormatVersion") != nil
}

// Parse reads a tidemq.yaml. Unknown fields are errors.
func Parse(data []byte) (*Config, error) {
	root, err := parseTree(data)
	if err != nil {
		return nil, err
	}
	return parseConfig(data, root)
}

// errPosition is the [line:column] a YAML error starts with.
var (
	errPosition  = regexp.MustCompile(`^\[\d+:\d+\]\s*`)
	unknownField = regexp.MustCompile(`unknown field "([^"]+)"`)
)

func parseConfig(data []byte, root *node) (*Config, error) {
	var c Config
	if root.aliased {
		// The YAML decoder does not resolve every form of merge key
		// (<<: [*a, *b]) and counts merged keys as duplicates: decode
		// the resolved tree instead.
		resolved, err := yaml.Marshal(root.plain())
		if err != nil {
			return nil, err
		}
		if err := yaml.UnmarshalWithOptions(resolved, &c, yaml.DisallowUnknownField(), yaml.AllowFieldPrefixes("x-")); err != nil {
			msg := errPosition.ReplaceAllString(yaml.FormatError(err, false, false), "")
			if m := unknownField.FindStringSubmatch(msg); m != nil {
				if line := root.findKey(m[1]); line > 0 {
					return nil, fmt.Errorf("line %d: %s", line, msg)
				}
			}
			return nil, fmt.Errorf("%s (the file uses YAML aliases or merge keys, so the line is not known)", msg)
		}
	} else if err := yaml.UnmarshalWithOptions(data, &c, yaml.DisallowUnknownField(), yaml.AllowFieldPrefixes("x-")); err != nil {
		return nil, fmt.Errorf("%s", yaml.FormatError(err, false, true))
	}
	if c.Version == 0 {
		c.Version = 1
	}
	if c.Version != 1 {
		return nil, fmt.Errorf("line %d: unsupported version %d (this tidemq reads version 1)", root.keyLine("version"), c.Version)
	}
	attach := func(section string, i int, s *src, name string) {
		s.LogicalID = section + "[" + name + "]"
		seq := root.get(section)
		if seq == nil || seq.kind != kindSeq || i >= len(seq.items) {
			return
		}
		item := seq.items[i]
		s.Line = item.line
		recordLines(s, "", item)
	}
	for i, q := range c.Queues {
		attach("queues", i, &q.src, q.Name)
	}
	for i, t := range c.Topics {
		attach("topics", i, &t.src, t.Name)
		for _, s := range t.Subscriptions {
			s.LogicalID = t.LogicalID + ".subscriptions[" + s.Protocol + ":" + s.Endpoint + "]"
		}
		if seq := root.get("topics"); seq != nil && i < len(seq.items) {
			subs := seq.items[i].get("subscriptions")
			for j, s := range t.Subscriptions {
				if subs != nil && j < len(subs.items) {
					s.Line = subs.items[j].line
					recordLines(&s.src, "", subs.items[j])
				}
			}
		}
	}
	for i, f := range c.Functions {
		attach("functions", i, &f.src, f.Name)
	}
	for i, t := range c.Triggers {
		attach("triggers", i, &t.src, TriggerName(t))
	}
	for i, a := range c.Alarms {
		attach("alarms", i, &a.src, a.Name)
	}
	if c.Lint != nil {
		seq := root.get("lint").get("suppress")
		for i := range c.Lint.Suppress {
			c.Lint.Suppress[i].Source = SuppressedInConfig
			if seq != nil && seq.kind == kindSeq && i < len(seq.items) {
				c.Lint.Suppress[i].Line = seq.items[i].line
			}
		}
	}
	return &c, nil
}

// recordLines records the line of every map key below n as a dotted path.
func recordLines(s *src, prefix string, n *node) {
	if n == nil || n.kind != kindMap {
		return
	}
	for _, e := range n.entries {
		p := e.key
		if prefix != "" {
			p = prefix + "." + e.key
		}
		s.setLine(p, e.keyLine)
		recordLines(s, p, e.val)
	}
}

// Marshal renders the config as a tidemq.yaml.
func Marshal(c *Config) ([]byte, error) {
	out := *c
	if out.Version == 0 {
		out.Version = 1
	}
	for _, q := range out.Queues {
		if len(q.Tags) == 0 {
			q.Tags = nil
		}
	}
	for _, t := range out.Topics {
		if len(t.Tags) == 0 {
			t.Tags = nil
		}
	}
	return yaml.MarshalWithOptions(&out, yaml.Indent(2), yaml.IndentSequence(true), yaml.UseLiteralStyleIfMultiline(true))
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
