package topology

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/tidemq/tidemq"
)

// Target is what the applier needs from an SQS endpoint. BrokerTarget
// adapts a tidemq.Broker (in-process, for 'tidemq serve --config'); the
// CLI adapts an aws-sdk-go-v2 SQS client (for 'tidemq apply').
type Target interface {
	// Queue returns a queue's attributes (including QueueArn) and tags, or
	// exists false.
	Queue(ctx context.Context, name string) (attrs, tags map[string]string, exists bool, err error)
	// CreateQueue creates a queue and returns its ARN.
	CreateQueue(ctx context.Context, name string, attrs, tags map[string]string) (arn string, err error)
	SetQueueAttributes(ctx context.Context, name string, attrs map[string]string) error
	TagQueue(ctx context.Context, name string, tags map[string]string) error
	UntagQueue(ctx context.Context, name string, keys []string) error
}

// Kinds of things a plan changes.
const (
	KindQueue        = "queue"
	KindTopic        = "topic"
	KindSubscription = "subscription"
	KindTrigger      = "trigger"
	KindAlarm        = "alarm"
)

// Actions of a change.
const (
	ActionCreate    = "create"
	ActionUpdate    = "update"
	ActionUnchanged = "unchanged"
	// ActionSkip is something of the topology that is not applied, for
	// the Reason given (a function without a local target, an alarm with
	// no built-in equivalent, ...). It is not an error.
	ActionSkip = "skip"
)

// Change is one step of a plan.
type Change struct {
	Kind  string // KindQueue, KindTopic, ...
	Queue string // for KindQueue: the queue's name
	// Name is what the change is about: a queue, topic or trigger name,
	// "topic -> protocol:endpoint" for a subscription, an alarm's name.
	Name   string
	Action string // ActionCreate, ActionUpdate, ActionUnchanged or ActionSkip
	// Attributes to set, with their current values ("" for a new queue).
	Attributes []AttributeChange
	TagsSet    map[string]string
	TagsRemove []string
	// Reason says why a change is skipped.
	Reason string
	// Notes are remarks printed under the change: what an alarm became,
	// settings that could not be carried over.
	Notes []string
}

// AttributeChange is one attribute's old and new value.
type AttributeChange struct {
	Name, Old, New string
}

// Plan is what Apply will do (or did).
type Plan struct {
	Changes []Change
}

// Changed reports whether the plan changes anything.
func (p *Plan) Changed() bool {
	for _, c := range p.Changes {
		if c.Action == ActionCreate || c.Action == ActionUpdate {
			return true
		}
	}
	return false
}

// Of returns the changes of one kind.
func (p *Plan) Of(kind string) []Change {
	var out []Change
	for _, c := range p.Changes {
		if c.Kind == kind {
			out = append(out, c)
		}
	}
	return out
}

// Find returns the change of a kind and name, or nil.
func (p *Plan) Find(kind, name string) *Change {
	for i, c := range p.Changes {
		if c.Kind == kind && c.Name == name {
			return &p.Changes[i]
		}
	}
	return nil
}

// Print writes the plan: a line per change (+ create, ~ update,
// = unchanged, ! not applied), the attributes it sets, and a summary.
func (p *Plan) Print(w io.Writer) {
	for _, c := range p.Changes {
		sym := map[string]string{ActionCreate: "+", ActionUpdate: "~", ActionUnchanged: "=", ActionSkip: "!"}[c.Action]
		if c.Action == ActionSkip {
			fmt.Fprintf(w, "%s %s %s (not applied: %s)\n", sym, c.Kind, c.Name, c.Reason)
		} else {
			fmt.Fprintf(w, "%s %s %s (%s)\n", sym, c.Kind, c.Name, c.Action)
		}
		for _, a := range c.Attributes {
			if c.Action == ActionCreate {
				fmt.Fprintf(w, "    %s = %s\n", a.Name, a.New)
			} else {
				fmt.Fprintf(w, "    %s: %s -> %s\n", a.Name, orNone(a.Old), orNone(a.New))
			}
		}
		for _, k := range sortedKeys(c.TagsSet) {
			fmt.Fprintf(w, "    tag %s = %s\n", k, c.TagsSet[k])
		}
		for _, k := range c.TagsRemove {
			fmt.Fprintf(w, "    untag %s\n", k)
		}
		for _, n := range c.Notes {
			fmt.Fprintf(w, "    note: %s\n", n)
		}
	}
	var n [4]int
	for _, c := range p.Changes {
		switch c.Action {
		case ActionCreate:
			n[0]++
		case ActionUpdate:
			n[1]++
		case ActionSkip:
			n[3]++
		default:
			n[2]++
		}
	}
	fmt.Fprintf(w, "%d to create, %d to update, %d unchanged, %d not applied\n", n[0], n[1], n[2], n[3])
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// Targets are where Apply applies each part of a topology. Queues is
// required. A nil target leaves its part out of the plan, unless
// NotApplied gives a reason for its kind: then each element of that kind
// is listed as skipped with that reason.
type Targets struct {
	Queues   Target
	Topics   TopicTarget
	Triggers TriggerTarget
	Alarms   AlarmTarget
	// NotApplied maps a kind (KindTopic, KindTrigger, KindAlarm) without
	// a target to the reason it is not applied.
	NotApplied map[string]string
}

// ApplyAll makes the targets match the topology, in order: queues
// (dead-letter queues first), topics and their subscriptions, triggers,
// alarms. Nothing is ever deleted, and a second run finds nothing to
// change. With dryRun it only plans. The plan is returned with the error
// when a step fails, holding the steps done before.
func ApplyAll(ctx context.Context, t Targets, c *Config, dryRun bool) (*Plan, error) {
	plan := &Plan{}
	arnOf, err := applyQueues(ctx, t.Queues, c, dryRun, plan)
	if err != nil {
		return plan, err
	}
	skipAll := func(kind string, names []string) {
		if why := t.NotApplied[kind]; why != "" {
			for _, n := range names {
				plan.Changes = append(plan.Changes, Change{Kind: kind, Name: n, Action: ActionSkip, Reason: why})
			}
		}
	}
	if t.Topics != nil {
		if err := applyTopics(ctx, t.Topics, c, arnOf, dryRun, plan); err != nil {
			return plan, err
		}
	} else {
		var names []string
		for _, tp := range c.Topics {
			names = append(names, tp.Name)
		}
		skipAll(KindTopic, names)
	}
	if t.Triggers != nil {
		if err := applyTriggers(ctx, t.Triggers, c, dryRun, plan); err != nil {
			return plan, err
		}
	} else {
		var names []string
		for _, tr := range c.Triggers {
			names = append(names, TriggerName(tr))
		}
		skipAll(KindTrigger, names)
	}
	if t.Alarms != nil {
		applyAlarms(t.Alarms, c, dryRun, plan)
	} else {
		var names []string
		for _, a := range c.Alarms {
			names = append(names, a.Name)
		}
		skipAll(KindAlarm, names)
	}
	return plan, nil
}

// Apply makes the target's queues match the topology; it is ApplyAll with
// a queue target only.
func Apply(ctx context.Context, target Target, c *Config, dryRun bool) (*Plan, error) {
	return ApplyAll(ctx, Targets{Queues: target}, c, dryRun)
}

// applyQueues creates missing queues (dead-letter queues before their
// sources) and updates attributes and tags that differ. It never deletes
// a queue. It returns how queue names resolve to ARNs on the target.
//
// An attribute the topology leaves out takes the SQS default, except
// SqsManagedSseEnabled and the KMS settings, which are left as they are.
// Tags are reconciled only for queues that declare tags.
func applyQueues(ctx context.Context, target Target, c *Config, dryRun bool, plan *Plan) (func(string) string, error) {
	order, err := applyOrder(c)
	if err != nil {
		return nil, err
	}
	arns := map[string]string{}
	current := map[string]map[string]string{}
	tags := map[string]map[string]string{}
	for _, q := range order {
		a, t, ok, err := target.Queue(ctx, q.Name)
		if err != nil {
			return nil, fmt.Errorf("queue %s: %w", q.Name, err)
		}
		if ok {
			current[q.Name], tags[q.Name] = a, t
			arns[q.Name] = a[tidemq.AttrQueueArn]
			if fifo := a[tidemq.AttrFifoQueue] == "true"; fifo != q.FIFO {
				return nil, fmt.Errorf("queue %s exists as a %s queue; the topology declares it %s, and SQS cannot change a queue's type", q.Name, kind(fifo), kind(q.FIFO))
			}
		}
	}
	// ARNs of queues not yet created: same partition, region and account as
	// any known queue; in a dry run against an empty target, a placeholder.
	arnOf := func(name string) string {
		if a, ok := arns[name]; ok && a != "" {
			return a
		}
		for _, a := range arns {
			if p, ok := tidemq.ParseARN(a); ok {
				p.Resource = name
				return p.String()
			}
		}
		return tidemq.QueueARN(tidemq.DefaultRegion, tidemq.DefaultAccountID, name)
	}
	var allowLater []Change // RedriveAllowPolicy of new queues, set once every source exists
	for _, q := range order {
		want, err := desired(q, arnOf)
		if err != nil {
			return nil, err
		}
		ch := Change{Kind: KindQueue, Queue: q.Name, Name: q.Name}
		cur, exists := current[q.Name]
		if !exists {
			ch.Action = ActionCreate
			create := map[string]string{}
			for _, k := range sortedKeys(want) {
				if want[k] == "" {
					continue
				}
				ch.Attributes = append(ch.Attributes, AttributeChange{Name: k, New: want[k]})
				if k == tidemq.AttrRedriveAllowPolicy {
					allowLater = append(allowLater, Change{Queue: q.Name, Attributes: []AttributeChange{{Name: k, New: want[k]}}})
					continue
				}
				create[k] = want[k]
			}
			ch.TagsSet = q.Tags
			if !dryRun {
				arn, err := target.CreateQueue(ctx, q.Name, create, q.Tags)
				if err != nil {
					return nil, fmt.Errorf("create queue %s: %w", q.Name, err)
				}
				arns[q.Name] = arn
			}
			plan.Changes = append(plan.Changes, ch)
			continue
		}
		set := map[string]string{}
		for _, k := range sortedKeys(want) {
			if !sameAttribute(k, cur[k], want[k]) {
				ch.Attributes = append(ch.Attributes, AttributeChange{Name: k, Old: cur[k], New: want[k]})
				set[k] = want[k]
			}
		}
		if q.Tags != nil {
			have := tags[q.Name]
			for k, v := range q.Tags {
				if hv, ok := have[k]; !ok || hv != v {
					if ch.TagsSet == nil {
						ch.TagsSet = map[string]string{}
					}
					ch.TagsSet[k] = v
				}
			}
			for _, k := range sortedKeys(have) {
				if _, ok := q.Tags[k]; !ok {
					ch.TagsRemove = append(ch.TagsRemove, k)
				}
			}
		}
		ch.Action = ActionUnchanged
		if len(set) > 0 || len(ch.TagsSet) > 0 || len(ch.TagsRemove) > 0 {
			ch.Action = ActionUpdate
		}
		if !dryRun {
			if len(set) > 0 {
				if err := target.SetQueueAttributes(ctx, q.Name, set); err != nil {
					return nil, fmt.Errorf("update queue %s: %w", q.Name, err)
				}
			}
			if len(ch.TagsSet) > 0 {
				if err := target.TagQueue(ctx, q.Name, ch.TagsSet); err != nil {
					return nil, fmt.Errorf("tag queue %s: %w", q.Name, err)
				}
			}
			if len(ch.TagsRemove) > 0 {
				if err := target.UntagQueue(ctx, q.Name, ch.TagsRemove); err != nil {
					return nil, fmt.Errorf("untag queue %s: %w", q.Name, err)
				}
			}
		}
		plan.Changes = append(plan.Changes, ch)
	}
	if !dryRun {
		for _, ch := range allowLater {
			a := ch.Attributes[0]
			if err := target.SetQueueAttributes(ctx, ch.Queue, map[string]string{a.Name: a.New}); err != nil {
				return nil, fmt.Errorf("update queue %s: %w", ch.Queue, err)
			}
		}
	}
	return arnOf, nil
}

// desired is the full attribute set a queue should have: the SQS defaults
// overridden by the topology, with empty policies for the ones it leaves
// out (so that a removed redrive policy is removed).
func desired(q *Queue, arnOf func(string) string) (map[string]string, error) {
	want := tidemq.DefaultQueueAttributes(q.FIFO)
	delete(want, tidemq.AttrSqsManagedSseEnabled)
	delete(want, tidemq.AttrFifoQueue) // not settable after creation; checked separately
	want[tidemq.AttrRedrivePolicy] = ""
	want[tidemq.AttrRedriveAllowPolicy] = ""
	want[tidemq.AttrPolicy] = ""
	attrs := q.Attributes(arnOf)
	norm, err := tidemq.ValidateQueueAttributes(attrs, q.FIFO, true)
	if err != nil {
		return nil, fmt.Errorf("queue %s: %w", q.Name, err)
	}
	for k, v := range norm {
		want[k] = v
	}
	delete(want, tidemq.AttrFifoQueue)
	if q.FIFO {
		want[tidemq.AttrFifoQueue] = "true" // for CreateQueue; sameAttribute ignores it on updates
	}
	return want, nil
}

// sameAttribute compares attribute values as SQS means them: JSON
// policies by content, "" and an absent policy alike.
func sameAttribute(name, have, want string) bool {
	if name == tidemq.AttrFifoQueue {
		return true
	}
	if have == want {
		return true
	}
	switch name {
	case tidemq.AttrPolicy, tidemq.AttrRedrivePolicy, tidemq.AttrRedriveAllowPolicy, "DeliveryPolicy", "FilterPolicy":
		if have == "" || want == "" {
			return false
		}
		var a, b any
		if json.Unmarshal([]byte(have), &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
			return false
		}
		ja, _ := json.Marshal(normalizeJSON(a))
		jb, _ := json.Marshal(normalizeJSON(b))
		return string(ja) == string(jb)
	}
	isBool := strings.EqualFold(have, "true") || strings.EqualFold(have, "false")
	return isBool && strings.EqualFold(have, want)
}

// normalizeJSON makes numbers written as strings (maxReceiveCount "1")
// compare equal to numbers.
func normalizeJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeJSON(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalizeJSON(e)
		}
	case float64:
		return fmt.Sprint(x)
	}
	return v
}

// applyOrder sorts queues so that every dead-letter queue of the topology
// comes before its sources.
func applyOrder(c *Config) ([]*Queue, error) {
	var out []*Queue
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(q *Queue) error
	visit = func(q *Queue) error {
		switch state[q.Name] {
		case 1:
			return fmt.Errorf("queue %s: redrive policies form a cycle", q.Name)
		case 2:
			return nil
		}
		state[q.Name] = 1
		if r := q.RedrivePolicy; r != nil {
			if d := c.Queue(queueName(r.DeadLetterQueue)); d != nil && d != q {
				if err := visit(d); err != nil {
					return err
				}
			}
		}
		state[q.Name] = 2
		out = append(out, q)
		return nil
	}
	for _, q := range c.Queues {
		if err := visit(q); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// BrokerTarget applies a topology directly to a tidemq.Broker.
type BrokerTarget struct {
	Broker tidemq.Broker
}

// Queue implements Target.
func (b BrokerTarget) Queue(ctx context.Context, name string) (map[string]string, map[string]string, bool, error) {
	if _, err := b.Broker.GetQueue(ctx, tidemq.GetQueueParams{Name: name}); err != nil {
		if tidemq.HasCode(err, tidemq.ErrQueueDoesNotExist) {
			return nil, nil, false, nil
		}
		return nil, nil, false, err
	}
	attrs, err := b.Broker.GetQueueAttributes(ctx, tidemq.GetQueueAttributesParams{Queue: name, Names: []string{tidemq.AttrAll}})
	if err != nil {
		return nil, nil, false, err
	}
	tags, err := b.Broker.ListQueueTags(ctx, tidemq.ListQueueTagsParams{Queue: name})
	return attrs, tags, err == nil, err
}

// CreateQueue implements Target.
func (b BrokerTarget) CreateQueue(ctx context.Context, name string, attrs, tags map[string]string) (string, error) {
	info, err := b.Broker.CreateQueue(ctx, tidemq.CreateQueueParams{Name: name, Attributes: attrs, Tags: tags})
	if err != nil {
		return "", err
	}
	return info.ARN, nil
}

// SetQueueAttributes implements Target.
func (b BrokerTarget) SetQueueAttributes(ctx context.Context, name string, attrs map[string]string) error {
	return b.Broker.SetQueueAttributes(ctx, tidemq.SetQueueAttributesParams{Queue: name, Attributes: attrs})
}

// TagQueue implements Target.
func (b BrokerTarget) TagQueue(ctx context.Context, name string, tags map[string]string) error {
	return b.Broker.TagQueue(ctx, tidemq.TagQueueParams{Queue: name, Tags: tags})
}

// UntagQueue implements Target.
func (b BrokerTarget) UntagQueue(ctx context.Context, name string, keys []string) error {
	return b.Broker.UntagQueue(ctx, tidemq.UntagQueueParams{Queue: name, TagKeys: keys})
}
