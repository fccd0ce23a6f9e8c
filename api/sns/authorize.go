package sns

import (
	"errors"
	"strings"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/sns"
)

// authorize asks Config.Authorize whether the caller may do the request's
// action on the topic it names, and answers a refusal as SNS does
// (AuthorizationError, 403). A call without a signature (the anonymous
// ConfirmSubscription and Unsubscribe, whose token or ARN is the
// credential) is not asked about.
func (q *request) authorize(key string) error {
	if q.h.cfg.Authorize == nil || key == "" {
		return nil
	}
	if q.action == "ListTopics" && q.h.cfg.Allowed != nil {
		return nil // decided topic by topic (visibleTopics)
	}
	action := "sns:" + q.action
	if q.action == "PublishBatch" {
		action = "sns:Publish" // a batch is authorized as its single action, as on AWS
	}
	err := q.h.cfg.Authorize(q.r, key, action, q.resource())
	var e *tidemq.Error
	if errors.As(err, &e) && e.Code == tidemq.ErrAccessDenied {
		return sns.AuthorizationError(e.Message)
	}
	return err
}

// resource is the ARN the request is about: its topic (named, or the topic
// of the subscription named), the resource it tags, the topic CreateTopic
// would create, or every topic of the account for the listings (and for a
// Publish to a PhoneNumber, which publish() refuses: tidemq sends no SMS).
func (q *request) resource() string {
	p := q.params
	switch {
	case p.Str("TopicArn") != "":
		return p.Str("TopicArn")
	case q.action == "Publish" && p.Str("TargetArn") != "":
		return p.Str("TargetArn") // Publish's other name for the topic (publish() reads it so)
	case p.Str("SubscriptionArn") != "":
		arn := p.Str("SubscriptionArn")
		if i := strings.LastIndexByte(arn, ':'); i > 0 && strings.Count(arn, ":") >= 6 {
			return arn[:i]
		}
		return arn
	case p.Str("ResourceArn") != "":
		return p.Str("ResourceArn")
	case q.action == "CreateTopic" && p.Str("Name") != "":
		return q.h.svc.TopicARNIn(q.account, p.Str("Name"))
	}
	return q.h.svc.TopicARNIn(q.account, "*")
}

// owns reports whether a topic (by ARN) is of the caller's account: the
// listings list those, as ListQueues lists the caller's queues.
func (q *request) owns(topicARN string) bool {
	return q.h.svc.OwnerOf(topicARN) == q.callerAccount()
}

// callerAccount is the caller's account: its principal's, else the
// service's.
func (q *request) callerAccount() string {
	if q.account != "" {
		return q.account
	}
	return q.h.svc.AccountID()
}

// ownTopics keeps the caller's account's topics.
func (q *request) ownTopics(topics []*sns.Topic) []*sns.Topic {
	out := topics[:0:0]
	for _, t := range topics {
		if q.owns(t.ARN) {
			out = append(out, t)
		}
	}
	return out
}

// visibleTopics keeps the topics the caller may list (sns:ListTopics on
// each topic's ARN, its policy included), as ListQueues keeps the queues
// the caller may sqs:ListQueues on. Without an Allowed (no --auth) every
// topic is kept.
func (q *request) visibleTopics(topics []*sns.Topic) []*sns.Topic {
	if q.h.cfg.Authorize == nil || q.h.cfg.Allowed == nil || q.key == "" {
		return topics
	}
	out := topics[:0:0]
	for _, t := range topics {
		if q.h.cfg.Allowed(q.r, q.key, "sns:ListTopics", t.ARN) {
			out = append(out, t)
		}
	}
	return out
}
