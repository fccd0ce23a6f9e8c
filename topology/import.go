package topology

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/tidemq/tidemq"
)

// Resource types the importer understands.
const (
	typeQueue              = "AWS::SQS::Queue"
	typeQueuePolicy        = "AWS::SQS::QueuePolicy"
	typeTopic              = "AWS::SNS::Topic"
	typeSubscription       = "AWS::SNS::Subscription"
	typeFunction           = "AWS::Lambda::Function"
	typeServerlessFunction = "AWS::Serverless::Function"
	typeESM                = "AWS::Lambda::EventSourceMapping"
	typeAlarm              = "AWS::CloudWatch::Alarm"
)

// ImportOptions are the values of the pseudo parameters and the
// parameters of the stack being imported.
type ImportOptions struct {
	Region     string            // AWS::Region, default us-east-1
	AccountID  string            // AWS::AccountId, default 000000000000 (tidemq's)
	StackName  string            // AWS::StackName, default "stack"
	Partition  string            // AWS::Partition, default aws
	Parameters map[string]string // overrides of the template's parameter defaults
	// ParamFlag is the flag that gives Parameters, named in the error for
	// a parameter without a default: "--param" unless set.
	ParamFlag string
}

// ImportReport says what an import could not carry over.
type ImportReport struct {
	// Unsupported are resources of types the importer does not model.
	Unsupported []UnsupportedResource
	// Notes are things that were approximated or skipped, with their line.
	Notes []string
}

// UnsupportedResource is a template resource that was not imported.
type UnsupportedResource struct {
	LogicalID string
	Type      string
	Line      int
}

type resource struct {
	id    string
	typ   string
	line  int
	node  *node // the resource's map (Type, Properties, Condition, ...)
	props *node
	name  string // physical name, once computed
	named bool
}

type template struct {
	opts       ImportOptions
	root       *node
	params     map[string]any
	conds      map[string]bool
	evaluating map[string]bool // conditions being evaluated, to find cycles
	resources  map[string]*resource
	ids        []string // resources in document order
	globals    *node    // Globals.Function
	report     *ImportReport
	naming     map[string]bool
}

func (t *template) note(s string) { t.report.Notes = append(t.report.Notes, s) }

// Import reads a CloudFormation or SAM template (YAML with short-form tags,
// or JSON) and returns its topology.
func Import(data []byte, opts ImportOptions) (*Config, *ImportReport, error) {
	root, err := parseTree(data)
	if err != nil {
		return nil, nil, err
	}
	if !IsTemplate(root) {
		return nil, nil, fmt.Errorf("not a CloudFormation template: no Resources section")
	}
	return importTree(root, opts)
}

// ImportFile is Import on a file; findings will name the file.
func ImportFile(path string, opts ImportOptions) (*Config, *ImportReport, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	c, rep, err := Import(data, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	c.File = path
	return c, rep, nil
}

func importTree(root *node, opts ImportOptions) (*Config, *ImportReport, error) {
	if opts.Region == "" {
		opts.Region = "us-east-1"
	}
	if opts.AccountID == "" {
		opts.AccountID = tidemq.DefaultAccountID
	}
	if opts.StackName == "" {
		opts.StackName = "stack"
	}
	if opts.Partition == "" {
		opts.Partition = "aws"
	}
	t := &template{opts: opts, root: root, params: map[string]any{}, conds: map[string]bool{}, evaluating: map[string]bool{},
		resources: map[string]*resource{}, report: &ImportReport{}, naming: map[string]bool{},
		globals: root.get("Globals").get("Function")}
	if ps := root.get("Parameters"); ps != nil {
		for _, e := range ps.entries {
			if v, ok := opts.Parameters[e.key]; ok {
				t.params[e.key] = paramValue(e.val, v)
				continue
			}
			d := e.val.get("Default")
			if d == nil {
				flag := opts.ParamFlag
				if flag == "" {
					flag = "--param"
				}
				return nil, nil, fmt.Errorf("line %d: parameter %s has no default: give it with %s %s=VALUE", e.keyLine, e.key, flag, e.key)
			}
			t.params[e.key] = paramValue(e.val, d.str)
		}
	}
	res := root.get("Resources")
	if res == nil || res.kind != kindMap {
		return nil, nil, fmt.Errorf("the template has no Resources map")
	}
	for _, e := range res.entries {
		typ := e.val.get("Type")
		if typ == nil {
			return nil, nil, fmt.Errorf("line %d: resource %s has no Type", e.keyLine, e.key)
		}
		t.resources[e.key] = &resource{id: e.key, typ: typ.str, line: e.keyLine, node: e.val, props: e.val.get("Properties")}
		t.ids = append(t.ids, e.key)
	}
	c := &Config{Version: 1}
	// Queues first: everything else refers to them.
	for _, id := range t.ids {
		r := t.resources[id]
		if r.typ != typeQueue {
			continue
		}
		if ok, err := t.active(r); err != nil || !ok {
			if err != nil {
				return nil, nil, err
			}
			continue
		}
		q, err := t.importQueue(r)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", id, err)
		}
		c.Queues = append(c.Queues, q)
	}
	if err := t.suppressions(c); err != nil {
		return nil, nil, err
	}
	im := &importer{t: t, c: c}
	im.finishQueues()
	for _, id := range t.ids {
		r := t.resources[id]
		if r.typ == typeQueue {
			continue
		}
		if ok, err := t.active(r); err != nil || !ok {
			if err != nil {
				return nil, nil, err
			}
			continue
		}
		var err error
		switch r.typ {
		case typeQueuePolicy:
			err = im.queuePolicy(r)
		case typeTopic:
			err = im.topic(r)
		case typeSubscription:
			err = im.subscription(r)
		case typeFunction, typeServerlessFunction:
			err = im.function(r)
		case typeESM:
			err = im.eventSourceMapping(r)
		case typeAlarm:
			err = im.alarm(r)
		default:
			t.report.Unsupported = append(t.report.Unsupported, UnsupportedResource{LogicalID: id, Type: r.typ, Line: r.line})
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s (%s): %w", id, r.typ, err)
		}
	}
	return c, t.report, nil
}

func paramValue(decl *node, v string) any {
	if typ := decl.get("Type"); typ != nil && (typ.str == "CommaDelimitedList" || strings.HasPrefix(typ.str, "List<")) {
		var out []any
		for _, p := range strings.Split(v, ",") {
			out = append(out, strings.TrimSpace(p))
		}
		return out
	}
	return v
}

// active reports whether a resource's Condition (if any) holds.
func (t *template) active(r *resource) (bool, error) {
	c := r.node.get("Condition")
	if c == nil {
		return true, nil
	}
	ok, err := t.condition(c.str)
	if err != nil {
		return false, fmt.Errorf("%s: %w", r.id, err)
	}
	return ok, nil
}

// physicalName is the name CloudFormation gives a resource: its name
// property, else (unlike CloudFormation, which adds the stack name and a
// random suffix) its logical id.
func (t *template) physicalName(r *resource) (string, error) {
	if r.named {
		return r.name, nil
	}
	if t.naming[r.id] {
		return "", fmt.Errorf("the name of %s depends on itself", r.id)
	}
	t.naming[r.id] = true
	defer delete(t.naming, r.id)
	prop := map[string]string{typeQueue: "QueueName", typeTopic: "TopicName", typeFunction: "FunctionName", typeServerlessFunction: "FunctionName"}[r.typ]
	name := r.id
	if n := r.props.get(prop); n != nil && prop != "" {
		s, err := t.evalString(n)
		if err != nil {
			return "", err
		}
		if s != "" {
			name = s
		}
	} else if fifoProp := map[string]string{typeQueue: "FifoQueue", typeTopic: "FifoTopic"}[r.typ]; fifoProp != "" {
		fifo, err := t.isTrue(r.props.get(fifoProp))
		if err != nil {
			return "", err
		}
		if fifo {
			name += ".fifo"
		}
	}
	r.name, r.named = name, true
	return name, nil
}

// isTrue evaluates a boolean property: false when absent, an error when it
// cannot be evaluated or is neither true nor false (an error here must not
// turn a FIFO queue into a standard one, or an enabled event source into a
// disabled one, silently).
func (t *template) isTrue(n *node) (bool, error) {
	if n == nil {
		return false, nil
	}
	s, err := t.evalString(n)
	if err != nil {
		return false, err
	}
	switch {
	case strings.EqualFold(s, "true"):
		return true, nil
	case strings.EqualFold(s, "false"), s == "":
		return false, nil
	}
	return false, fmt.Errorf("line %d: expected true or false, not %q", n.line, s)
}

type importer struct {
	t *template
	c *Config
}

// queueByValue finds the queue a resolved value (URL, ARN or name) names.
func (im *importer) queueByValue(v string) *Queue {
	for _, q := range im.c.Queues {
		if v == q.Name || v == im.t.arn("sqs", q.Name) ||
			v == fmt.Sprintf("https://sqs.%s.amazonaws.com/%s/%s", im.t.opts.Region, im.t.opts.AccountID, q.Name) {
			return q
		}
	}
	return nil
}

// localName turns a queue ARN or URL of this template into the queue's name.
func (im *importer) localName(v string) string {
	if q := im.queueByValue(v); q != nil {
		return q.Name
	}
	return v
}

// queueProps maps queue properties to model fields, for lines.
var queueProps = map[string]string{
	"VisibilityTimeout": "visibilityTimeout", "MessageRetentionPeriod": "messageRetentionPeriod",
	"MaximumMessageSize": "maximumMessageSize", "DelaySeconds": "delaySeconds",
	"ReceiveMessageWaitTimeSeconds": "receiveMessageWaitTimeSeconds", "ContentBasedDeduplication": "contentBasedDeduplication",
	"DeduplicationScope": "deduplicationScope", "FifoThroughputLimit": "fifoThroughputLimit",
	"KmsMasterKeyId": "kmsMasterKeyId", "KmsDataKeyReusePeriodSeconds": "kmsDataKeyReusePeriodSeconds",
	"SqsManagedSseEnabled": "sqsManagedSseEnabled", "RedrivePolicy": "redrivePolicy",
	"RedriveAllowPolicy": "redriveAllowPolicy", "Tags": "tags", "FifoQueue": "fifo", "QueueName": "name",
}

func (t *template) importQueue(r *resource) (*Queue, error) {
	name, err := t.physicalName(r)
	if err != nil {
		return nil, err
	}
	q := &Queue{Name: name}
	q.Line, q.LogicalID = r.line, r.id
	if r.props == nil {
		return q, nil
	}
	var firstErr error
	intp := func(prop string) *int {
		n := r.props.get(prop)
		if n == nil {
			return nil
		}
		s, err := t.evalString(n)
		if err != nil || s == "" {
			if err != nil && firstErr == nil {
				firstErr = err
			}
			return nil
		}
		v, err := strconv.Atoi(s)
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("line %d: %s must be a number, not %q", n.line, prop, s)
			}
			return nil
		}
		return &v
	}
	boolp := func(prop string) *bool {
		n := r.props.get(prop)
		if n == nil {
			return nil
		}
		s, err := t.evalString(n)
		if err != nil || s == "" { // "" is AWS::NoValue: the default
			if err != nil && firstErr == nil {
				firstErr = err
			}
			return nil
		}
		b, err := t.isTrue(n)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			return nil
		}
		return &b
	}
	str := func(prop string) string {
		s, err := t.evalString(r.props.get(prop))
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return s
	}
	for _, e := range r.props.entries {
		if f, ok := queueProps[e.key]; ok {
			q.setLine(f, e.keyLine)
		} else {
			t.note(fmt.Sprintf("line %d: %s: queue property %s is not imported", e.keyLine, r.id, e.key))
		}
	}
	fifo, err := t.isTrue(r.props.get("FifoQueue"))
	if err != nil {
		return nil, err
	}
	q.FIFO = fifo || strings.HasSuffix(name, ".fifo")
	q.VisibilityTimeout = intp("VisibilityTimeout")
	q.MessageRetentionPeriod = intp("MessageRetentionPeriod")
	q.MaximumMessageSize = intp("MaximumMessageSize")
	q.DelaySeconds = intp("DelaySeconds")
	q.ReceiveMessageWaitTimeSeconds = intp("ReceiveMessageWaitTimeSeconds")
	q.KmsDataKeyReusePeriodSeconds = intp("KmsDataKeyReusePeriodSeconds")
	q.ContentBasedDeduplication = boolp("ContentBasedDeduplication")
	q.SqsManagedSseEnabled = boolp("SqsManagedSseEnabled")
	q.DeduplicationScope = str("DeduplicationScope")
	q.FifoThroughputLimit = str("FifoThroughputLimit")
	q.KmsMasterKeyID = str("KmsMasterKeyId")
	if n := r.props.get("RedrivePolicy"); n != nil {
		v, err := t.eval(n)
		if err != nil {
			return nil, err
		}
		m, _ := v.(map[string]any)
		if s, ok := v.(string); ok { // a JSON string
			_ = json.Unmarshal([]byte(s), &m)
		}
		target, _ := asString(m["deadLetterTargetArn"])
		count, _ := strconv.Atoi(fmt.Sprint(m["maxReceiveCount"]))
		q.RedrivePolicy = &RedrivePolicy{DeadLetterQueue: target, MaxReceiveCount: count} // resolved to a name below
		q.setLine("redrivePolicy.deadLetterQueue", n.keyLine("deadLetterTargetArn"))
		q.setLine("redrivePolicy.maxReceiveCount", n.keyLine("maxReceiveCount"))
	}
	if n := r.props.get("RedriveAllowPolicy"); n != nil {
		v, err := t.eval(n)
		if err != nil {
			return nil, err
		}
		m, _ := v.(map[string]any)
		if s, ok := v.(string); ok {
			_ = json.Unmarshal([]byte(s), &m)
		}
		p := &RedriveAllowPolicy{}
		p.RedrivePermission, _ = asString(m["redrivePermission"])
		if l, ok := m["sourceQueueArns"].([]any); ok {
			for _, s := range l {
				a, _ := asString(s)
				p.SourceQueues = append(p.SourceQueues, a)
			}
		}
		q.RedriveAllowPolicy = p
	}
	if n := r.props.get("Tags"); n != nil {
		v, err := t.eval(n)
		if err != nil {
			return nil, err
		}
		list, _ := v.([]any)
		q.Tags = map[string]string{}
		for _, it := range list {
			m, _ := it.(map[string]any)
			k, _ := asString(m["Key"])
			val, _ := asString(m["Value"])
			q.Tags[k] = val
		}
	}
	return q, firstErr
}

func (im *importer) finishQueues() {
	for _, q := range im.c.Queues {
		if q.RedrivePolicy != nil {
			q.RedrivePolicy.DeadLetterQueue = im.localName(q.RedrivePolicy.DeadLetterQueue)
		}
		if q.RedriveAllowPolicy != nil {
			for i, s := range q.RedriveAllowPolicy.SourceQueues {
				q.RedriveAllowPolicy.SourceQueues[i] = im.localName(s)
			}
		}
	}
}

func (im *importer) queuePolicy(r *resource) error {
	v, err := im.t.eval(r.props.get("Queues"))
	if err != nil {
		return err
	}
	doc, err := im.t.eval(r.props.get("PolicyDocument"))
	if err != nil {
		return err
	}
	list, _ := v.([]any)
	for _, it := range list {
		s, _ := asString(it)
		q := im.queueByValue(s)
		if q == nil {
			im.t.note(fmt.Sprintf("line %d: %s: queue %s is not in this template; policy skipped", r.line, r.id, s))
			continue
		}
		q.Policy = jsonText(doc)
		q.setLine("policy", r.line)
	}
	return nil
}

func (im *importer) topic(r *resource) error {
	name, err := im.t.physicalName(r)
	if err != nil {
		return err
	}
	fifo, err := im.t.isTrue(r.props.get("FifoTopic"))
	if err != nil {
		return err
	}
	tp := &Topic{Name: name, FIFO: fifo || strings.HasSuffix(name, ".fifo")}
	tp.Line, tp.LogicalID = r.line, r.id
	if err := im.topicProperties(tp, r); err != nil {
		return err
	}
	if subs := r.props.get("Subscription"); subs != nil {
		for _, it := range subs.items {
			s, err := im.sub(it, it.get("Protocol"), it.get("Endpoint"), nil, nil)
			if err != nil {
				return err
			}
			s.LogicalID = r.id // an inline subscription is part of its topic
			tp.Subscriptions = append(tp.Subscriptions, s)
		}
	}
	im.c.Topics = append(im.c.Topics, tp)
	return nil
}

// topicProperties imports a topic's attributes and tags.
func (im *importer) topicProperties(tp *Topic, r *resource) error {
	t := im.t
	for prop, field := range map[string]*string{"DisplayName": &tp.DisplayName, "FifoThroughputScope": &tp.FifoThroughputScope,
		"SignatureVersion": &tp.SignatureVersion, "KmsMasterKeyId": &tp.KmsMasterKeyID} {
		v, err := t.evalString(r.props.get(prop))
		if err != nil {
			return err
		}
		*field = v
	}
	if n := r.props.get("ContentBasedDeduplication"); n != nil {
		b, err := t.isTrue(n)
		if err != nil {
			return err
		}
		tp.ContentBasedDeduplication = &b
	}
	if n := r.props.get("TracingConfig"); n != nil {
		v, err := t.evalString(n)
		if err != nil {
			return err
		}
		tp.TracingConfig = v
	}
	if n := r.props.get("DeliveryPolicy"); n != nil {
		v, err := t.eval(n)
		if err != nil {
			return err
		}
		tp.DeliveryPolicy = jsonText(v)
	}
	tags, err := im.tags(r.props.get("Tags"))
	if err != nil {
		return err
	}
	tp.Tags = tags
	return nil
}

// tags imports a CloudFormation tag list ([{Key, Value}]); nil without one.
func (im *importer) tags(n *node) (map[string]string, error) {
	if n == nil {
		return nil, nil
	}
	v, err := im.t.eval(n)
	if err != nil {
		return nil, err
	}
	list, _ := v.([]any)
	out := map[string]string{}
	for _, it := range list {
		m, _ := it.(map[string]any)
		k, _ := asString(m["Key"])
		val, _ := asString(m["Value"])
		out[k] = val
	}
	return out, nil
}

func (im *importer) sub(n, proto, endpoint, raw, filter *node) (*Subscription, error) {
	p, err := im.t.evalString(proto)
	if err != nil {
		return nil, err
	}
	ep, err := im.t.evalString(endpoint)
	if err != nil {
		return nil, err
	}
	s := &Subscription{Protocol: p, Endpoint: ep}
	if p == "sqs" {
		s.Endpoint = im.localName(ep)
	}
	s.Line = n.line
	if s.RawMessageDelivery, err = im.t.isTrue(raw); err != nil {
		return nil, err
	}
	if filter != nil {
		v, err := im.t.eval(filter)
		if err != nil {
			return nil, err
		}
		s.FilterPolicy = jsonText(v)
	}
	return s, nil
}

func (im *importer) subscription(r *resource) error {
	arn, err := im.t.evalString(r.props.get("TopicArn"))
	if err != nil {
		return err
	}
	var tp *Topic
	for _, x := range im.c.Topics {
		if im.t.arn("sns", x.Name) == arn {
			tp = x
		}
	}
	if tp == nil { // a topic of another stack: model it by its ARN's name
		name := queueName(arn)
		tp = &Topic{Name: name, FIFO: strings.HasSuffix(name, ".fifo")}
		tp.Line, tp.LogicalID = r.line, r.id
		im.c.Topics = append(im.c.Topics, tp)
	}
	s, err := im.sub(r.node, r.props.get("Protocol"), r.props.get("Endpoint"), r.props.get("RawMessageDelivery"), r.props.get("FilterPolicy"))
	if err != nil {
		return err
	}
	s.Line, s.LogicalID = r.line, r.id
	if s.FilterPolicyScope, err = im.t.evalString(r.props.get("FilterPolicyScope")); err != nil {
		return err
	}
	if n := r.props.get("RedrivePolicy"); n != nil {
		v, err := im.t.eval(n)
		if err != nil {
			return err
		}
		m, _ := v.(map[string]any)
		if str, ok := v.(string); ok {
			_ = json.Unmarshal([]byte(str), &m)
		}
		target, _ := asString(m["deadLetterTargetArn"])
		s.RedrivePolicy = &SubscriptionRedrivePolicy{DeadLetterQueue: im.localName(target)}
	}
	tp.Subscriptions = append(tp.Subscriptions, s)
	return nil
}

// function imports a Lambda or SAM function: its timeout and reserved
// concurrency (with SAM Globals), the queues its environment and policies
// send to, and the SQS events of a SAM function as triggers.
func (im *importer) function(r *resource) error {
	t := im.t
	name, err := t.physicalName(r)
	if err != nil {
		return err
	}
	f := &Function{Name: name}
	f.Line, f.LogicalID = r.line, r.id
	prop := func(key string) (*node, int) {
		if n := r.props.get(key); n != nil {
			return n, r.props.keyLine(key)
		}
		if r.typ == typeServerlessFunction {
			if n := t.globals.get(key); n != nil {
				return n, t.globals.keyLine(key)
			}
		}
		return nil, 0
	}
	num := func(key, field string) (*int, error) {
		n, line := prop(key)
		if n == nil {
			return nil, nil
		}
		s, err := t.evalString(n)
		if err != nil || s == "" {
			return nil, err
		}
		v, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("line %d: %s must be a number, not %q", line, key, s)
		}
		f.setLine(field, line)
		return &v, nil
	}
	if f.Timeout, err = num("Timeout", "timeout"); err != nil {
		return err
	}
	if f.ReservedConcurrency, err = num("ReservedConcurrentExecutions", "reservedConcurrency"); err != nil {
		return err
	}
	if f.MemorySize, err = num("MemorySize", "memorySize"); err != nil {
		return err
	}
	if err := im.functionCode(f, r, prop); err != nil {
		return err
	}
	produces := map[string]int{}
	// Environment: every variable that names a queue (URL, ARN or name).
	for _, envSrc := range []*node{t.globals.get("Environment"), r.props.get("Environment")} {
		if envSrc == nil || (envSrc == t.globals.get("Environment") && r.typ != typeServerlessFunction) {
			continue
		}
		vars := envSrc.get("Variables")
		if vars == nil {
			continue
		}
		for _, e := range vars.entries {
			v, err := t.eval(e.val)
			if err != nil {
				return err
			}
			im.setEnvironment(f, e.key, v, e.keyLine)
			for _, s := range stringsIn(v) {
				if q := im.queueByValue(s); q != nil {
					produces[q.Name] = e.keyLine
				}
			}
		}
	}
	// Policies: SAM's SQSSendMessagePolicy and IAM statements allowing
	// sqs:SendMessage. SQSPollerPolicy is a consumer's permission.
	if pol := r.props.get("Policies"); pol != nil {
		items := pol.items
		if pol.kind == kindMap {
			items = []*node{pol}
		}
		for _, it := range items {
			if n := it.get("SQSSendMessagePolicy"); n != nil {
				v, err := t.eval(n.get("QueueName"))
				if err != nil {
					return err
				}
				for _, s := range stringsIn(v) {
					if q := im.queueByValue(s); q != nil {
						produces[q.Name] = n.line
					}
				}
			}
			if st := it.get("Statement"); st != nil {
				if err := im.statementSends(st, produces); err != nil {
					return err
				}
			}
		}
	}
	if err := im.localTarget(f, r); err != nil {
		return err
	}
	for _, q := range sortedKeys(produces) {
		f.Produces = append(f.Produces, q)
		f.setLine("produces."+q, produces[q])
	}
	if f.Produces != nil {
		f.setLine("produces", produces[f.Produces[0]])
	}
	im.c.Functions = append(im.c.Functions, f)
	if events := r.props.get("Events"); events != nil {
		for _, e := range events.entries {
			typ, _ := t.evalString(e.val.get("Type"))
			if typ != "SQS" {
				continue
			}
			tr, err := im.trigger(e.val.get("Properties"), "Queue", name, e.keyLine)
			if err != nil {
				return fmt.Errorf("event %s: %w", e.key, err)
			}
			tr.LogicalID = r.id + ".Events." + e.key
			im.c.Triggers = append(im.c.Triggers, tr)
		}
	}
	return nil
}

// localTarget reads what stands for a function locally from its resource
// Metadata (which AWS ignores):
//
//	Metadata:
//	  tidemq:
//	    url: http://127.0.0.1:8080/   # or command: [./handler.sh]
//	    headers: {Authorization: Bearer x}
//	    dir: ./lambdas
func (im *importer) localTarget(f *Function, r *resource) error {
	n := r.node.get("Metadata").get("tidemq")
	if n == nil {
		return nil
	}
	v, err := im.t.eval(n)
	if err != nil {
		return err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("line %d: Metadata.tidemq must be a map (url, command, headers, dir, suppress)", n.line)
	}
	for _, k := range sortedKeys(m) {
		switch k {
		case "url":
			f.URL, _ = asString(m[k])
		case "dir":
			f.Dir, _ = asString(m[k])
		case "command":
			f.Command = stringsIn(m[k])
		case "headers":
			h, _ := m[k].(map[string]any)
			f.Headers = map[string]string{}
			for hk, hv := range h {
				f.Headers[hk], _ = asString(hv)
			}
		case "suppress": // lint suppressions: see suppressions
			continue
		default:
			return fmt.Errorf("line %d: Metadata.tidemq.%s: unknown key (url, command, headers, dir, suppress)", n.keyLine(k), k)
		}
		f.setLine(k, n.keyLine(k))
	}
	return nil
}

func (im *importer) statementSends(st *node, produces map[string]int) error {
	items := st.items
	if st.kind == kindMap {
		items = []*node{st}
	}
	for _, s := range items {
		if eff, _ := im.t.evalString(s.get("Effect")); eff == "Deny" {
			continue
		}
		act, err := im.t.eval(s.get("Action"))
		if err != nil {
			return err
		}
		sends := false
		for _, a := range stringsIn(act) {
			a = strings.ToLower(a)
			if a == "sqs:*" || a == "*" || strings.HasPrefix(a, "sqs:sendmessage") {
				sends = true
			}
		}
		if !sends {
			continue
		}
		res, err := im.t.eval(s.get("Resource"))
		if err != nil {
			return err
		}
		for _, v := range stringsIn(res) {
			if q := im.queueByValue(v); q != nil {
				produces[q.Name] = s.line
			}
		}
	}
	return nil
}

// trigger imports the properties of an event source (a SAM SQS event or
// an AWS::Lambda::EventSourceMapping).
func (im *importer) trigger(p *node, queueKey, function string, line int) (*Trigger, error) {
	t := im.t
	src, err := t.evalString(p.get(queueKey))
	if err != nil {
		return nil, err
	}
	tr := &Trigger{Queue: im.localName(src), Function: function}
	tr.Line = line
	tr.setLine("queue", p.keyLine(queueKey))
	num := func(n *node, key, field string) (*int, error) {
		if n == nil {
			return nil, nil
		}
		s, err := t.evalString(n)
		if err != nil || s == "" {
			return nil, err
		}
		v, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("line %d: %s must be a number, not %q", n.line, key, s)
		}
		tr.setLine(field, n.line)
		return &v, nil
	}
	if tr.BatchSize, err = num(p.get("BatchSize"), "BatchSize", "batchSize"); err != nil {
		return nil, err
	}
	if tr.MaximumBatchingWindowInSeconds, err = num(p.get("MaximumBatchingWindowInSeconds"), "MaximumBatchingWindowInSeconds", "maximumBatchingWindowInSeconds"); err != nil {
		return nil, err
	}
	if tr.MaximumConcurrency, err = num(p.get("ScalingConfig").get("MaximumConcurrency"), "MaximumConcurrency", "maximumConcurrency"); err != nil {
		return nil, err
	}
	if n := p.get("FunctionResponseTypes"); n != nil {
		v, err := t.eval(n)
		if err != nil {
			return nil, err
		}
		for _, s := range stringsIn(v) {
			if s == "ReportBatchItemFailures" {
				tr.ReportBatchItemFailures = true
			}
		}
		tr.setLine("reportBatchItemFailures", p.keyLine("FunctionResponseTypes"))
	}
	if n := p.get("Enabled"); n != nil {
		b, err := t.isTrue(n)
		if err != nil {
			return nil, err
		}
		tr.Enabled = &b
		tr.setLine("enabled", p.keyLine("Enabled"))
	}
	return tr, nil
}

func (im *importer) eventSourceMapping(r *resource) error {
	src, err := im.t.evalString(r.props.get("EventSourceArn"))
	if err != nil {
		return err
	}
	if !strings.HasPrefix(src, "arn:") || !strings.Contains(src, ":sqs:") {
		im.t.note(fmt.Sprintf("line %d: %s: event source %s is not an SQS queue; skipped", r.line, r.id, src))
		return nil
	}
	fn, err := im.t.evalString(r.props.get("FunctionName"))
	if err != nil {
		return err
	}
	if i := strings.Index(fn, ":function:"); i >= 0 { // an ARN
		fn, _, _ = strings.Cut(fn[i+len(":function:"):], ":")
	}
	tr, err := im.trigger(r.props, "EventSourceArn", fn, r.line)
	if err != nil {
		return err
	}
	tr.LogicalID = r.id
	im.c.Triggers = append(im.c.Triggers, tr)
	return nil
}

func (im *importer) alarm(r *resource) error {
	t := im.t
	ns, err := t.evalString(r.props.get("Namespace"))
	if err != nil {
		return err
	}
	if ns != "AWS/SQS" {
		t.note(fmt.Sprintf("line %d: %s: alarm on namespace %q is not a queue alarm; skipped", r.line, r.id, ns))
		return nil
	}
	dims, err := t.eval(r.props.get("Dimensions"))
	if err != nil {
		return err
	}
	var queue string
	list, _ := dims.([]any)
	for _, d := range list {
		m, _ := d.(map[string]any)
		if m["Name"] == "QueueName" {
			queue, _ = asString(m["Value"])
		}
	}
	name := r.id
	if n := r.props.get("AlarmName"); n != nil {
		if name, err = t.evalString(n); err != nil {
			return err
		}
	}
	a := &Alarm{Name: name, Queue: im.localName(queue)}
	a.Line, a.LogicalID = r.line, r.id
	for prop, field := range map[string]*string{"MetricName": &a.Metric, "Statistic": &a.Statistic, "ComparisonOperator": &a.ComparisonOperator} {
		if *field, err = t.evalString(r.props.get(prop)); err != nil {
			return err
		}
	}
	// Numbers: absent is 0 (the model's "not set"); anything else must
	// be a number, or the alarm would silently watch the wrong threshold.
	number := func(prop string, parse func(string) error) error {
		n := r.props.get(prop)
		s, err := t.evalString(n)
		if err != nil || s == "" {
			return err
		}
		if parse(s) != nil {
			return fmt.Errorf("line %d: %s must be a number, not %q", n.line, prop, s)
		}
		return nil
	}
	if err := number("Threshold", func(s string) (err error) { a.Threshold, err = strconv.ParseFloat(s, 64); return }); err != nil {
		return err
	}
	if err := number("Period", func(s string) (err error) { a.Period, err = strconv.Atoi(s); return }); err != nil {
		return err
	}
	if err := number("EvaluationPeriods", func(s string) (err error) { a.EvaluationPeriods, err = strconv.Atoi(s); return }); err != nil {
		return err
	}
	im.c.Alarms = append(im.c.Alarms, a)
	return nil
}

// stringsIn lists every string in an evaluated value.
func stringsIn(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, it := range x {
			out = append(out, stringsIn(it)...)
		}
		return out
	case map[string]any:
		var out []string
		for _, k := range sortedKeys(x) {
			out = append(out, stringsIn(x[k])...)
		}
		return out
	}
	return nil
}

// jsonText renders an evaluated value as compact JSON with sorted keys.
func jsonText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
