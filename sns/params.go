package sns

import "github.com/tidemq/tidemq"

// The Service's calls take a context and a params struct each, as the
// Broker's do (tidemq.Broker): the fields are the SNS action's parameters,
// with Go's names.

// CreateTopicParams are CreateTopic's.
type CreateTopicParams struct {
	Name       string
	Attributes map[string]string
	Tags       map[string]string
	// Account is the account the topic is created in (its ARN's, package
	// authz's caller); "" is the service's. Each account's topic names are
	// its own.
	Account string
}

// DeleteTopicParams are DeleteTopic's.
type DeleteTopicParams struct {
	TopicARN string
}

// GetTopicAttributesParams are GetTopicAttributes'.
type GetTopicAttributesParams struct {
	TopicARN string
}

// SetTopicAttributesParams are SetTopicAttributes': one attribute.
type SetTopicAttributesParams struct {
	TopicARN       string
	AttributeName  string
	AttributeValue string
}

// SubscribeParams is Subscribe's: a subscription request.
type SubscribeParams struct {
	TopicARN   string
	Protocol   string // sqs, http or https
	Endpoint   string // a queue ARN, or a URL
	Attributes map[string]string
	// BaseURL is the scheme and host of the SubscribeURL sent to an
	// HTTP/HTTPS endpoint; "" means Options.PublicURL.
	BaseURL string
}

// UnsubscribeParams is Unsubscribe's.
type UnsubscribeParams struct {
	SubscriptionARN string
	// Anonymous says the caller sent no AWS signature (e.g. a GET of an
	// UnsubscribeURL): it may not delete a subscription confirmed with
	// AuthenticateOnUnsubscribe.
	Anonymous bool
}

// ConfirmSubscriptionParams are ConfirmSubscription's. Anonymous says
// that the request carried no AWS signature; AuthenticateOnUnsubscribe
// (honoured only when it did) forbids anonymous unsubscribes.
type ConfirmSubscriptionParams struct {
	TopicARN                  string
	Token                     string
	Anonymous                 bool
	AuthenticateOnUnsubscribe bool
}

// ListSubscriptionsParams are ListSubscriptions': a topic's, or every
// topic's when TopicARN is "".
type ListSubscriptionsParams struct {
	TopicARN string
}

// GetSubscriptionAttributesParams are GetSubscriptionAttributes'.
type GetSubscriptionAttributesParams struct {
	SubscriptionARN string
}

// SetSubscriptionAttributesParams are SetSubscriptionAttributes': one
// attribute.
type SetSubscriptionAttributesParams struct {
	SubscriptionARN string
	AttributeName   string
	AttributeValue  string
}

// AddPermissionParams are AddPermission's: a statement Label allowing the
// accounts the actions (with or without their "SNS:" prefix).
type AddPermissionParams struct {
	TopicARN   string
	Label      string
	AccountIDs []string
	Actions    []string
}

// RemovePermissionParams are RemovePermission's.
type RemovePermissionParams struct {
	TopicARN string
	Label    string
}

// TagResourceParams are TagResource's.
type TagResourceParams struct {
	ResourceARN string
	Tags        map[string]string
}

// UntagResourceParams are UntagResource's.
type UntagResourceParams struct {
	ResourceARN string
	TagKeys     []string
}

// ListTagsForResourceParams are ListTagsForResource's.
type ListTagsForResourceParams struct {
	ResourceARN string
}

// PublishParams is Publish's: one message to publish.
type PublishParams struct {
	TopicARN               string
	Message                string
	Subject                string
	MessageStructure       string
	Attributes             map[string]Attribute
	MessageGroupID         string
	MessageDeduplicationID string
	// BaseURL is the scheme and host of SigningCertURL and UnsubscribeURL,
	// e.g. "http://localhost:9324".
	BaseURL string
	Client  tidemq.ClientInfo
	// TraceHeader is the request's X-Amzn-Trace-Id (X-Ray) header: SQS
	// deliveries carry it as their AWSTraceHeader system attribute. One
	// that is not a valid trace header is ignored.
	TraceHeader string
	// SubjectSet says that the request had a Subject parameter, even an
	// empty one (which AWS refuses).
	SubjectSet bool
}

// PublishBatchParams are PublishBatch's: the entries of one topic.
type PublishBatchParams struct {
	TopicARN string
	Entries  []PublishBatchEntry
}
