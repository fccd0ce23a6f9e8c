package main

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/tidemq/tidemq/topology"
)

// snsClientLike returns an SNS client with the endpoint, region,
// credentials and HTTP client of an SQS client (tidemq answers both on one
// port; on AWS the region picks SNS's endpoint).
func snsClientLike(c *sqs.Client) *sns.Client {
	o := c.Options()
	return sns.New(sns.Options{
		Region: o.Region, Credentials: o.Credentials, BaseEndpoint: o.BaseEndpoint, HTTPClient: o.HTTPClient,
		Logger: o.Logger, ClientLogMode: o.ClientLogMode, RetryMaxAttempts: o.RetryMaxAttempts, RetryMode: o.RetryMode, AppID: o.AppID,
	})
}

// snsTarget applies topics and subscriptions through the SNS API.
type snsTarget struct {
	client *sns.Client
	arns   map[string]string // topic name → ARN; nil until listed
}

func (t *snsTarget) arn(ctx context.Context, name string) (string, error) {
	if t.arns == nil {
		t.arns = map[string]string{}
		p := sns.NewListTopicsPaginator(t.client, &sns.ListTopicsInput{})
		for p.HasMorePages() {
			out, err := p.NextPage(ctx)
			if err != nil {
				return "", err
			}
			for _, tp := range out.Topics {
				a := aws.ToString(tp.TopicArn)
				t.arns[a[strings.LastIndexByte(a, ':')+1:]] = a
			}
		}
	}
	return t.arns[name], nil
}

func (t *snsTarget) Topic(ctx context.Context, name string) (*topology.TopicState, error) {
	arn, err := t.arn(ctx, name)
	if err != nil || arn == "" {
		return nil, err
	}
	a, err := t.client.GetTopicAttributes(ctx, &sns.GetTopicAttributesInput{TopicArn: aws.String(arn)})
	if err != nil {
		return nil, err
	}
	st := &topology.TopicState{ARN: arn, FIFO: a.Attributes["FifoTopic"] == "true", Attributes: a.Attributes}
	tags, err := t.client.ListTagsForResource(ctx, &sns.ListTagsForResourceInput{ResourceArn: aws.String(arn)})
	if err != nil {
		st.NoTags = "they could not be read (" + errShort(err) + ")"
		return st, nil
	}
	st.Tags = map[string]string{}
	for _, tg := range tags.Tags {
		st.Tags[aws.ToString(tg.Key)] = aws.ToString(tg.Value)
	}
	return st, nil
}

func (t *snsTarget) CreateTopic(ctx context.Context, name string, attrs, tags map[string]string) (string, error) {
	in := &sns.CreateTopicInput{Name: aws.String(name), Attributes: attrs}
	for k, v := range tags {
		in.Tags = append(in.Tags, snstypes.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	out, err := t.client.CreateTopic(ctx, in)
	if err != nil {
		return "", err
	}
	if t.arns != nil {
		t.arns[name] = aws.ToString(out.TopicArn)
	}
	return aws.ToString(out.TopicArn), nil
}

func (t *snsTarget) SetTopicAttribute(ctx context.Context, arn, name, value string) error {
	_, err := t.client.SetTopicAttributes(ctx, &sns.SetTopicAttributesInput{TopicArn: aws.String(arn), AttributeName: aws.String(name), AttributeValue: aws.String(value)})
	return err
}

func (t *snsTarget) TagTopic(ctx context.Context, arn string, tags map[string]string) error {
	in := &sns.TagResourceInput{ResourceArn: aws.String(arn)}
	for k, v := range tags {
		in.Tags = append(in.Tags, snstypes.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	_, err := t.client.TagResource(ctx, in)
	return err
}

func (t *snsTarget) UntagTopic(ctx context.Context, arn string, keys []string) error {
	_, err := t.client.UntagResource(ctx, &sns.UntagResourceInput{ResourceArn: aws.String(arn), TagKeys: keys})
	return err
}

func (t *snsTarget) Subscriptions(ctx context.Context, topicARN string) ([]topology.SubscriptionState, error) {
	var out []topology.SubscriptionState
	p := sns.NewListSubscriptionsByTopicPaginator(t.client, &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String(topicARN)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, s := range page.Subscriptions {
			st := topology.SubscriptionState{ARN: aws.ToString(s.SubscriptionArn), Protocol: aws.ToString(s.Protocol), Endpoint: aws.ToString(s.Endpoint)}
			if strings.HasPrefix(st.ARN, "arn:") { // not "PendingConfirmation"
				a, err := t.client.GetSubscriptionAttributes(ctx, &sns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(st.ARN)})
				if err != nil {
					return nil, err
				}
				st.Attributes = a.Attributes
			}
			out = append(out, st)
		}
	}
	return out, nil
}

func (t *snsTarget) Subscribe(ctx context.Context, topicARN, protocol, endpoint string, attrs map[string]string) (string, error) {
	out, err := t.client.Subscribe(ctx, &sns.SubscribeInput{TopicArn: aws.String(topicARN), Protocol: aws.String(protocol),
		Endpoint: aws.String(endpoint), Attributes: attrs, ReturnSubscriptionArn: true})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.SubscriptionArn), nil
}

func (t *snsTarget) SetSubscriptionAttribute(ctx context.Context, arn, name, value string) error {
	_, err := t.client.SetSubscriptionAttributes(ctx, &sns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(arn),
		AttributeName: aws.String(name), AttributeValue: aws.String(value)})
	return err
}
