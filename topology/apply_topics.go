package topology

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// TopicTarget is what the applier needs from an SNS endpoint. SNSTarget
// adapts an sns.Service (in process, for 'tidemq serve --config'); the CLI
// adapts an aws-sdk-go-v2 SNS client (for 'tidemq apply').
type TopicTarget interface {
	// Topic returns the state of the topic with this name, or nil when
	// there is none.
	Topic(ctx context.Context, name string) (*TopicState, error)
	// CreateTopic creates a topic (attrs may hold FifoTopic) and returns
	// its ARN.
	CreateTopic(ctx context.Context, name string, attrs, tags map[string]string) (arn string, err error)
	SetTopicAttribute(ctx context.Context, arn, name, value string) error
	TagTopic(ctx context.Context, arn string, tags map[string]string) error
	UntagTopic(ctx context.Context, arn string, keys []string) error
	// Subscriptions lists a topic's subscriptions with their attributes.
	Subscriptions(ctx context.Context, topicARN string) ([]SubscriptionState, error)
	// Subscribe creates a subscription and returns its ARN.
	Subscribe(ctx context.Context, topicARN, protocol, endpoint string, attrs map[string]string) (arn string, err error)
	// SetSubscriptionAttribute sets one attribute; "" clears it.
	SetSubscriptionAttribute(ctx context.Context, arn, name, value string) error
}

// TopicState is a topic as a target has it.
type TopicState struct {
	ARN        string
	FIFO       bool
	Attributes map[string]string
	Tags       map[string]string
	// NoTags, when set, says why the topic's tags cannot be compared or
	// changed on this target (they are then left as they are).
	NoTags string
}

// SubscriptionState is a subscription as a target has it.
type SubscriptionState struct {
	ARN, Protocol, Endpoint string
	Attributes              map[string]string
}

// Attributes renders the topic attributes the topology sets (FifoTopic
// excluded: it is fixed at creation).
func (t *Topic) Attributes() map[string]string {
	a := map[string]string{}
	set := func(k, v string) {
		if v != "" {
			a[k] = v
		}
	}
	set("DisplayName", t.DisplayName)
	if t.ContentBasedDeduplication != nil {
		a["ContentBasedDeduplication"] = fmt.Sprint(*t.ContentBasedDeduplication)
	}
	set("FifoThroughputScope", t.FifoThroughputScope)
	set("SignatureVersion", t.SignatureVersion)
	set("KmsMasterKeyId", t.KmsMasterKeyID)
	set("TracingConfig", t.TracingConfig)
	set("Policy", t.Policy)
	set("DeliveryPolicy", t.DeliveryPolicy)
	return a
}

// appliedProtocols are the subscription protocols the applier creates.
// Others (email, sms, lambda, ...) are listed as not applied.
var appliedProtocols = map[string]bool{"sqs": true, "http": true, "https": true}

// subscriptionName is how a plan names a subscription.
func subscriptionName(tp *Topic, s *Subscription) string {
	return tp.Name + " -> " + s.Protocol + ":" + s.Endpoint
}

// subscriptionAttributes is every attribute the applier reconciles on a
// subscription; "" means absent.
func subscriptionAttributes(s *Subscription, arnOf func(string) string) map[string]string {
	a := map[string]string{
		"RawMessageDelivery": fmt.Sprint(s.RawMessageDelivery),
		"FilterPolicy":       s.FilterPolicy,
		"RedrivePolicy":      "",
	}
	if s.FilterPolicy != "" {
		a["FilterPolicyScope"] = s.FilterPolicyScope
		if a["FilterPolicyScope"] == "" {
			a["FilterPolicyScope"] = "MessageAttributes"
		}
	}
	if r := s.RedrivePolicy; r != nil {
		b, _ := json.Marshal(map[string]string{"deadLetterTargetArn": toARN(r.DeadLetterQueue, arnOf)})
		a["RedrivePolicy"] = string(b)
	}
	return a
}

// currentSubscriptionAttributes fills in what a target leaves implicit.
func currentSubscriptionAttributes(s SubscriptionState) map[string]string {
	a := map[string]string{}
	for k, v := range s.Attributes {
		a[k] = v
	}
	if a["RawMessageDelivery"] == "" {
		a["RawMessageDelivery"] = "false"
	}
	if a["FilterPolicy"] != "" && a["FilterPolicyScope"] == "" {
		a["FilterPolicyScope"] = "MessageAttributes"
	}
	return a
}

// applyTopics creates missing topics and subscriptions and puts back the
// attributes (and tags) the topology declares. Attributes a topic leaves
// out are left as they are. Subscriptions are matched by topic, protocol
// and endpoint (for sqs, the queue's ARN); sqs, http and https
// subscriptions are applied.
func applyTopics(ctx context.Context, target TopicTarget, c *Config, arnOf func(string) string, dryRun bool, plan *Plan) error {
	for _, tp := range c.Topics {
		st, err := target.Topic(ctx, tp.Name)
		if err != nil {
			return fmt.Errorf("topic %s: %w", tp.Name, err)
		}
		want := tp.Attributes()
		ch := Change{Kind: KindTopic, Name: tp.Name}
		var arn string
		if st == nil {
			ch.Action = ActionCreate
			create := map[string]string{}
			if tp.FIFO {
				create["FifoTopic"] = "true"
				ch.Attributes = append(ch.Attributes, AttributeChange{Name: "FifoTopic", New: "true"})
			}
			for _, k := range sortedKeys(want) {
				create[k] = want[k]
				ch.Attributes = append(ch.Attributes, AttributeChange{Name: k, New: want[k]})
			}
			ch.TagsSet = tp.Tags
			if !dryRun {
				if arn, err = target.CreateTopic(ctx, tp.Name, create, tp.Tags); err != nil {
					return fmt.Errorf("create topic %s: %w", tp.Name, err)
				}
			}
			plan.Changes = append(plan.Changes, ch)
		} else {
			if st.FIFO != tp.FIFO {
				return fmt.Errorf("topic %s exists as a %s topic; the topology declares it %s, and SNS cannot change a topic's type", tp.Name, kind(st.FIFO), kind(tp.FIFO))
			}
			arn = st.ARN
			for _, k := range sortedKeys(want) {
				if !sameAttribute(k, st.Attributes[k], want[k]) {
					ch.Attributes = append(ch.Attributes, AttributeChange{Name: k, Old: st.Attributes[k], New: want[k]})
				}
			}
			if tp.Tags != nil {
				set, remove := tagDiff(st.Tags, tp.Tags)
				switch {
				case st.NoTags != "" && (st.Tags == nil || len(set)+len(remove) > 0):
					ch.Notes = append(ch.Notes, "tags left as they are: "+st.NoTags)
				default:
					ch.TagsSet, ch.TagsRemove = set, remove
				}
			}
			ch.Action = ActionUnchanged
			if len(ch.Attributes) > 0 || len(ch.TagsSet) > 0 || len(ch.TagsRemove) > 0 {
				ch.Action = ActionUpdate
			}
			if !dryRun {
				for _, a := range ch.Attributes {
					if err := target.SetTopicAttribute(ctx, arn, a.Name, a.New); err != nil {
						return fmt.Errorf("update topic %s: %s: %w", tp.Name, a.Name, err)
					}
				}
				if len(ch.TagsSet) > 0 {
					if err := target.TagTopic(ctx, arn, ch.TagsSet); err != nil {
						return fmt.Errorf("tag topic %s: %w", tp.Name, err)
					}
				}
				if len(ch.TagsRemove) > 0 {
					if err := target.UntagTopic(ctx, arn, ch.TagsRemove); err != nil {
						return fmt.Errorf("untag topic %s: %w", tp.Name, err)
					}
				}
			}
			plan.Changes = append(plan.Changes, ch)
		}
		if err := applySubscriptions(ctx, target, tp, arn, arnOf, dryRun, plan); err != nil {
			return err
		}
	}
	return nil
}

// applySubscriptions reconciles one topic's subscriptions. topicARN is ""
// in a dry run for a topic not yet created.
func applySubscriptions(ctx context.Context, target TopicTarget, tp *Topic, topicARN string, arnOf func(string) string, dryRun bool, plan *Plan) error {
	var have []SubscriptionState
	if topicARN != "" {
		var err error
		if have, err = target.Subscriptions(ctx, topicARN); err != nil {
			return fmt.Errorf("topic %s: list subscriptions: %w", tp.Name, err)
		}
	}
	for _, s := range tp.Subscriptions {
		name := subscriptionName(tp, s)
		if !appliedProtocols[s.Protocol] {
			plan.Changes = append(plan.Changes, Change{Kind: KindSubscription, Name: name, Action: ActionSkip,
				Reason: fmt.Sprintf("protocol %s: only sqs, http and https subscriptions are applied", s.Protocol)})
			continue
		}
		endpoint := s.Endpoint
		if s.Protocol == "sqs" {
			endpoint = toARN(s.Endpoint, arnOf)
		}
		want := subscriptionAttributes(s, arnOf)
		var cur *SubscriptionState
		for i, h := range have {
			if h.Protocol == s.Protocol && h.Endpoint == endpoint {
				cur = &have[i]
				break
			}
		}
		ch := Change{Kind: KindSubscription, Name: name}
		if cur == nil {
			ch.Action = ActionCreate
			attrs := map[string]string{}
			for _, k := range sortedKeys(want) {
				if want[k] == "" || (k == "RawMessageDelivery" && want[k] == "false") {
					continue
				}
				attrs[k] = want[k]
				ch.Attributes = append(ch.Attributes, AttributeChange{Name: k, New: want[k]})
			}
			if !dryRun {
				if _, err := target.Subscribe(ctx, topicARN, s.Protocol, endpoint, attrs); err != nil {
					return fmt.Errorf("subscribe %s: %w", name, err)
				}
			}
			plan.Changes = append(plan.Changes, ch)
			continue
		}
		if !strings.HasPrefix(cur.ARN, "arn:") { // SNS lists an unconfirmed subscription as PendingConfirmation
			plan.Changes = append(plan.Changes, Change{Kind: KindSubscription, Name: name, Action: ActionUnchanged,
				Notes: []string{"pending confirmation: its attributes can be compared once the endpoint confirms it"}})
			continue
		}
		have := currentSubscriptionAttributes(*cur)
		// FilterPolicy before its scope: a scope alone is checked against
		// the policy in place.
		for _, k := range []string{"RawMessageDelivery", "FilterPolicy", "FilterPolicyScope", "RedrivePolicy"} {
			w, ok := want[k]
			if !ok {
				continue
			}
			if !sameAttribute(k, have[k], w) {
				ch.Attributes = append(ch.Attributes, AttributeChange{Name: k, Old: have[k], New: w})
			}
		}
		ch.Action = ActionUnchanged
		if len(ch.Attributes) > 0 {
			ch.Action = ActionUpdate
		}
		if !dryRun {
			for _, a := range ch.Attributes {
				if err := target.SetSubscriptionAttribute(ctx, cur.ARN, a.Name, a.New); err != nil {
					return fmt.Errorf("update subscription %s: %s: %w", name, a.Name, err)
				}
			}
		}
		plan.Changes = append(plan.Changes, ch)
	}
	return nil
}

// tagDiff returns the tags to set and the keys to remove so that have
// becomes want.
func tagDiff(have, want map[string]string) (map[string]string, []string) {
	var set map[string]string
	for k, v := range want {
		if hv, ok := have[k]; !ok || hv != v {
			if set == nil {
				set = map[string]string{}
			}
			set[k] = v
		}
	}
	var remove []string
	for _, k := range sortedKeys(have) {
		if _, ok := want[k]; !ok {
			remove = append(remove, k)
		}
	}
	return set, remove
}
