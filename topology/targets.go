package topology

import (
	"context"
	"errors"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/sns"
	"github.com/tidemq/tidemq/trigger"
)

// SNSTarget applies topics and subscriptions directly to tidemq's topic
// store.
type SNSTarget struct {
	Service *sns.Service
}

// Topic implements TopicTarget.
func (t SNSTarget) Topic(ctx context.Context, name string) (*TopicState, error) {
	arn := t.Service.TopicARN(name)
	attrs, err := t.Service.GetTopicAttributes(ctx, sns.GetTopicAttributesParams{TopicARN: arn})
	if err != nil {
		if tidemq.HasCode(err, tidemq.ErrSNSNotFound) {
			return nil, nil
		}
		return nil, err
	}
	st := &TopicState{ARN: arn, FIFO: attrs["FifoTopic"] == "true", Attributes: attrs, Tags: map[string]string{}}
	for _, tp := range t.Service.ListTopics(ctx) {
		if tp.ARN == arn {
			for k, v := range tp.Tags {
				st.Tags[k] = v
			}
		}
	}
	return st, nil
}

// CreateTopic implements TopicTarget.
func (t SNSTarget) CreateTopic(ctx context.Context, name string, attrs, tags map[string]string) (string, error) {
	tp, err := t.Service.CreateTopic(ctx, sns.CreateTopicParams{Name: name, Attributes: attrs, Tags: tags})
	if err != nil {
		return "", err
	}
	return tp.ARN, nil
}

// SetTopicAttribute implements TopicTarget.
func (t SNSTarget) SetTopicAttribute(ctx context.Context, arn, name, value string) error {
	return t.Service.SetTopicAttributes(ctx, sns.SetTopicAttributesParams{TopicARN: arn, AttributeName: name, AttributeValue: value})
}

// TagTopic implements TopicTarget.
func (t SNSTarget) TagTopic(ctx context.Context, arn string, tags map[string]string) error {
	return t.Service.TagResource(ctx, sns.TagResourceParams{ResourceARN: arn, Tags: tags})
}

// UntagTopic implements TopicTarget.
func (t SNSTarget) UntagTopic(ctx context.Context, arn string, keys []string) error {
	return t.Service.UntagResource(ctx, sns.UntagResourceParams{ResourceARN: arn, TagKeys: keys})
}

// Subscriptions implements TopicTarget.
func (t SNSTarget) Subscriptions(ctx context.Context, topicARN string) ([]SubscriptionState, error) {
	subs, err := t.Service.ListSubscriptions(ctx, sns.ListSubscriptionsParams{TopicARN: topicARN})
	if err != nil {
		return nil, err
	}
	out := make([]SubscriptionState, len(subs))
	for i, s := range subs {
		out[i] = SubscriptionState{ARN: s.ARN, Protocol: s.Protocol, Endpoint: s.Endpoint, Attributes: s.Attributes}
	}
	return out, nil
}

// Subscribe implements TopicTarget.
func (t SNSTarget) Subscribe(ctx context.Context, topicARN, protocol, endpoint string, attrs map[string]string) (string, error) {
	s, err := t.Service.Subscribe(ctx, sns.SubscribeParams{TopicARN: topicARN, Protocol: protocol, Endpoint: endpoint, Attributes: attrs})
	if err != nil {
		return "", err
	}
	return s.ARN, nil
}

// SetSubscriptionAttribute implements TopicTarget.
func (t SNSTarget) SetSubscriptionAttribute(ctx context.Context, arn, name, value string) error {
	return t.Service.SetSubscriptionAttributes(ctx, sns.SetSubscriptionAttributesParams{SubscriptionARN: arn, AttributeName: name, AttributeValue: value})
}

// ManagerTarget applies triggers directly to a trigger.Manager.
type ManagerTarget struct {
	Manager *trigger.Manager
}

// Trigger implements TriggerTarget.
func (t ManagerTarget) Trigger(ctx context.Context, name string) (*trigger.Status, error) {
	s, err := t.Manager.Get(name)
	if err != nil {
		var nf *trigger.NotFoundError
		if errors.As(err, &nf) {
			return nil, nil
		}
		return nil, err
	}
	return s, nil
}

// CreateTrigger implements TriggerTarget.
func (t ManagerTarget) CreateTrigger(ctx context.Context, c trigger.Config) ([]string, error) {
	s, err := t.Manager.Create(ctx, c)
	if err != nil {
		return nil, err
	}
	return s.Warnings, nil
}

// UpdateTrigger implements TriggerTarget.
func (t ManagerTarget) UpdateTrigger(ctx context.Context, c trigger.Config) ([]string, error) {
	s, err := t.Manager.Update(ctx, c.Name, TriggerPatch(c))
	if err != nil {
		return nil, err
	}
	return s.Warnings, nil
}
