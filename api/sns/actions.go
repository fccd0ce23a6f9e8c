package sns

import (
	"encoding/base64"
	"encoding/xml"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/api/awsquery"
	"github.com/tidemq/tidemq/sns"
)

// actions are the SNS actions tidemq answers.
var actions = map[string]func(q *request) (any, error){
	"CreateTopic":               createTopic,
	"DeleteTopic":               deleteTopic,
	"ListTopics":                listTopics,
	"GetTopicAttributes":        getTopicAttributes,
	"SetTopicAttributes":        setTopicAttributes,
	"Subscribe":                 subscribe,
	"Unsubscribe":               unsubscribe,
	"ListSubscriptions":         listSubscriptions,
	"ListSubscriptionsByTopic":  listSubscriptionsByTopic,
	"GetSubscriptionAttributes": getSubscriptionAttributes,
	"SetSubscriptionAttributes": setSubscriptionAttributes,
	"Publish":                   publish,
	"PublishBatch":              publishBatch,
	"ConfirmSubscription":       confirmSubscription,
	"TagResource":               tagResource,
	"UntagResource":             untagResource,
	"ListTagsForResource":       listTagsForResource,
	"AddPermission":             addPermission,
	"RemovePermission":          removePermission,
}

// unimplemented are the actions of AWS's SNS API (botocore's sns model,
// 2010-03-31) that tidemq does not answer: SMS, mobile push and data
// protection (the README's "Not implemented"). They are SNS requests all
// the same: the SNS handler refuses them with InvalidAction, in SNS's
// namespace and counted as SNS.<Action>, instead of the SQS handler
// answering them as SQS.
var unimplemented = map[string]bool{
	// SMS
	"CheckIfPhoneNumberIsOptedOut": true, "CreateSMSSandboxPhoneNumber": true, "DeleteSMSSandboxPhoneNumber": true,
	"GetSMSAttributes": true, "GetSMSSandboxAccountStatus": true, "ListOriginationNumbers": true,
	"ListPhoneNumbersOptedOut": true, "ListSMSSandboxPhoneNumbers": true, "OptInPhoneNumber": true,
	"SetSMSAttributes": true, "VerifySMSSandboxPhoneNumber": true,
	// mobile push
	"CreatePlatformApplication": true, "CreatePlatformEndpoint": true, "DeleteEndpoint": true,
	"DeletePlatformApplication": true, "GetEndpointAttributes": true, "GetPlatformApplicationAttributes": true,
	"ListEndpointsByPlatformApplication": true, "ListPlatformApplications": true, "SetEndpointAttributes": true,
	"SetPlatformApplicationAttributes": true,
	// data protection
	"GetDataProtectionPolicy": true, "PutDataProtectionPolicy": true,
}

// sharedActions are action names SQS has too: a request for one is SNS's
// when it names a topic (TopicArn), else SQS's.
var sharedActions = map[string]bool{"AddPermission": true, "RemovePermission": true}

// anonymousActions may be called without an AWS signature even with
// authentication on: the token (ConfirmSubscription) or the subscription
// ARN (Unsubscribe, from a notification's UnsubscribeURL) is the
// credential, as on AWS.
var anonymousActions = map[string]bool{"ConfirmSubscription": true, "Unsubscribe": true}

// IsAction reports whether action is an SNS action and not also an SQS
// action (AddPermission, RemovePermission: see isSNSAction): one tidemq
// answers, or one of AWS's it refuses (unimplemented).
func IsAction(action string) bool {
	_, ok := actions[action]
	return ok && !sharedActions[action] || unimplemented[action]
}

// isSNSAction reports whether a request of action is SNS's; param looks up
// one of its parameters.
func isSNSAction(action string, param func(string) string) bool {
	if sharedActions[action] {
		return param("TopicArn") != ""
	}
	return IsAction(action)
}

// SNS's maps and lists are not flattened: a map is name.entry.N.key /
// .value (or .Name / .Value.*), a list name.member.N, so their items are
// the Items("entry") or Items("member") of the node called name.

// stringMap reads a map of strings: name.entry.N.key / .value.
func stringMap(n *awsquery.Node, name string) map[string]string {
	return n.Child(name).StrMap("entry", "key", "value")
}

// tags reads Tags.member.N.Key / .Value; a key given twice is refused, in
// AWS's words.
func (q *request) tags() (map[string]string, error) {
	var m map[string]string
	for _, it := range q.params.Child("Tags").Items("member") {
		k := it.Str("Key")
		if _, dup := m[k]; dup {
			return nil, &tidemq.Error{Code: tidemq.ErrSNSInvalidParameter, Message: "Invalid parameter: Duplicated keys are not allowed."}
		}
		if m == nil {
			m = map[string]string{}
		}
		m[k] = it.Str("Value")
	}
	return m, nil
}

// messageAttributes reads a message's MessageAttributes.entry.N.Name /
// .Value.DataType / .Value.StringValue / .Value.BinaryValue.
func messageAttributes(n *awsquery.Node) (map[string]sns.Attribute, error) {
	var m map[string]sns.Attribute
	for _, it := range n.Child("MessageAttributes").Items("entry") {
		name := it.Str("Name")
		v := it.Child("Value")
		a := sns.Attribute{DataType: v.Str("DataType"), StringValue: v.Str("StringValue")}
		if b64 := v.Str("BinaryValue"); b64 != "" {
			b, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				return nil, &tidemq.Error{Code: tidemq.ErrSNSParameterValueInvalid, Message: "The message attribute '" + name + "' has an invalid binary value."}
			}
			a.BinaryValue = b
		}
		if m == nil {
			m = map[string]sns.Attribute{}
		}
		if _, dup := m[name]; dup {
			return nil, sns.InvalidParameter("MessageAttributes", "Message attribute name '"+name+"' has already been used.")
		}
		m[name] = a
	}
	if len(m) > 10 {
		return nil, sns.InvalidParameter("MessageAttributes", "Number of message attributes ["+strconv.Itoa(len(m))+"] exceeds the allowed maximum [10].")
	}
	return m, nil
}

// str returns a parameter's value, "" when absent.
func (q *request) str(name string) string { return q.params.Str(name) }

func (q *request) required(name string) (string, error) {
	v := q.str(name)
	if v == "" {
		return "", sns.InvalidParameter(name, "")
	}
	return v, nil
}

// page cuts a sorted list at NextToken (an index) into pages of size.
func page(n int, token string, size int) (from, to int, next string, err error) {
	if token != "" {
		from, err = strconv.Atoi(token)
		if err != nil || from < 0 || from > n {
			return 0, 0, "", sns.InvalidParameter("NextToken", "")
		}
	}
	to = min(from+size, n)
	if to < n {
		next = strconv.Itoa(to)
	}
	return from, to, next, nil
}

type attributeEntry struct {
	Key   string `xml:"key"`
	Value string `xml:"value"`
}

func entries(m map[string]string) []attributeEntry {
	out := make([]attributeEntry, 0, len(m))
	for k, v := range m {
		out = append(out, attributeEntry{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func createTopic(q *request) (any, error) {
	name, err := q.required("Name")
	if err != nil {
		return nil, err
	}
	tags, err := q.tags()
	if err != nil {
		return nil, err
	}
	t, err := q.h.svc.CreateTopic(q.r.Context(), sns.CreateTopicParams{Name: name, Attributes: stringMap(q.params, "Attributes"), Tags: tags, Account: q.account})
	if err != nil {
		return nil, err
	}
	return struct {
		XMLName  xml.Name `xml:"result"`
		TopicArn string
	}{TopicArn: t.ARN}, nil
}

func deleteTopic(q *request) (any, error) {
	return nil, q.h.svc.DeleteTopic(q.r.Context(), sns.DeleteTopicParams{TopicARN: q.str("TopicArn")})
}

type topicMember struct {
	TopicArn string
}

func listTopics(q *request) (any, error) {
	// Filtered before paging: a page is a page of what the caller sees.
	topics := q.visibleTopics(q.ownTopics(q.h.svc.ListTopics(q.r.Context())))
	from, to, next, err := page(len(topics), q.str("NextToken"), 100)
	if err != nil {
		return nil, err
	}
	out := struct {
		XMLName   xml.Name      `xml:"result"`
		Topics    []topicMember `xml:"Topics>member"`
		NextToken string        `xml:",omitempty"`
	}{NextToken: next}
	for _, t := range topics[from:to] {
		out.Topics = append(out.Topics, topicMember{t.ARN})
	}
	return out, nil
}

type attributesResult struct {
	XMLName    xml.Name         `xml:"result"`
	Attributes []attributeEntry `xml:"Attributes>entry"`
}

func getTopicAttributes(q *request) (any, error) {
	attrs, err := q.h.svc.GetTopicAttributes(q.r.Context(), sns.GetTopicAttributesParams{TopicARN: q.str("TopicArn")})
	if err != nil {
		return nil, err
	}
	return attributesResult{Attributes: entries(attrs)}, nil
}

func setTopicAttributes(q *request) (any, error) {
	name, err := q.required("AttributeName")
	if err != nil {
		return nil, err
	}
	return nil, q.h.svc.SetTopicAttributes(q.r.Context(), sns.SetTopicAttributesParams{TopicARN: q.str("TopicArn"), AttributeName: name, AttributeValue: q.str("AttributeValue")})
}

type subscriptionArnResult struct {
	XMLName         xml.Name `xml:"result"`
	SubscriptionArn string
}

// pendingARN is what Subscribe returns for a pending subscription without
// ReturnSubscriptionArn, and ListSubscriptions shows for one.
const (
	pendingSubscribeARN = "pending confirmation"
	pendingListARN      = "PendingConfirmation"
)

func subscribe(q *request) (any, error) {
	sub, err := q.h.svc.Subscribe(q.r.Context(), sns.SubscribeParams{
		TopicARN: q.str("TopicArn"), Protocol: q.str("Protocol"), Endpoint: q.str("Endpoint"),
		Attributes: stringMap(q.params, "Attributes"), BaseURL: q.baseURL(),
	})
	if err != nil {
		return nil, err
	}
	arn := sub.ARN
	if sub.Pending && !strings.EqualFold(q.str("ReturnSubscriptionArn"), "true") {
		arn = pendingSubscribeARN
	}
	return subscriptionArnResult{SubscriptionArn: arn}, nil
}

func unsubscribe(q *request) (any, error) {
	return nil, q.h.svc.Unsubscribe(q.r.Context(), sns.UnsubscribeParams{SubscriptionARN: q.str("SubscriptionArn"), Anonymous: q.anonymous})
}

func confirmSubscription(q *request) (any, error) {
	topic, err := q.required("TopicArn")
	if err != nil {
		return nil, err
	}
	token, err := q.required("Token")
	if err != nil {
		return nil, err
	}
	authOnUnsub := false
	switch v := strings.ToLower(q.str("AuthenticateOnUnsubscribe")); v {
	case "", "false":
	case "true":
		authOnUnsub = true
	default:
		return nil, sns.InvalidParameter("AuthenticateOnUnsubscribe", "")
	}
	sub, err := q.h.svc.ConfirmSubscription(q.r.Context(), sns.ConfirmSubscriptionParams{TopicARN: topic, Token: token, Anonymous: q.anonymous, AuthenticateOnUnsubscribe: authOnUnsub})
	if err != nil {
		return nil, err
	}
	return subscriptionArnResult{SubscriptionArn: sub.ARN}, nil
}

func tagResource(q *request) (any, error) {
	arn, err := q.required("ResourceArn")
	if err != nil {
		return nil, err
	}
	if len(q.params.Child("Tags").Items("member")) > sns.MaxTags {
		return nil, sns.TagLimitExceeded()
	}
	tags, err := q.tags()
	if err != nil {
		return nil, err
	}
	return emptyResult(q.h.svc.TagResource(q.r.Context(), sns.TagResourceParams{ResourceARN: arn, Tags: tags}))
}

// emptyResult is the answer of an action whose result element is present
// but empty (TagResource, UntagResource: the SDKs expect the element).
func emptyResult(err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return struct {
		XMLName xml.Name `xml:"result"`
	}{}, nil
}

func untagResource(q *request) (any, error) {
	arn, err := q.required("ResourceArn")
	if err != nil {
		return nil, err
	}
	return emptyResult(q.h.svc.UntagResource(q.r.Context(), sns.UntagResourceParams{ResourceARN: arn, TagKeys: q.params.Child("TagKeys").StrList("member")}))
}

type tagMember struct {
	Key   string
	Value string
}

func listTagsForResource(q *request) (any, error) {
	arn, err := q.required("ResourceArn")
	if err != nil {
		return nil, err
	}
	tags, err := q.h.svc.ListTagsForResource(q.r.Context(), sns.ListTagsForResourceParams{ResourceARN: arn})
	if err != nil {
		return nil, err
	}
	out := struct {
		XMLName xml.Name    `xml:"result"`
		Tags    []tagMember `xml:"Tags>member"`
	}{Tags: []tagMember{}}
	for _, t := range tags {
		out.Tags = append(out.Tags, tagMember{t.Key, t.Value})
	}
	return out, nil
}

type subscriptionMember struct {
	SubscriptionArn string
	Owner           string
	Protocol        string
	Endpoint        string
	TopicArn        string
}

type subscriptionsResult struct {
	XMLName       xml.Name             `xml:"result"`
	Subscriptions []subscriptionMember `xml:"Subscriptions>member"`
	NextToken     string               `xml:",omitempty"`
}

func (q *request) listSubs(topicARN string) (any, error) {
	subs, err := q.h.svc.ListSubscriptions(q.r.Context(), sns.ListSubscriptionsParams{TopicARN: topicARN})
	if err != nil {
		return nil, err
	}
	if topicARN == "" { // every subscription of the caller's account's topics
		own := subs[:0:0]
		for _, s := range subs {
			if q.owns(s.TopicARN) {
				own = append(own, s)
			}
		}
		subs = own
	}
	from, to, next, err := page(len(subs), q.str("NextToken"), 100)
	if err != nil {
		return nil, err
	}
	out := subscriptionsResult{NextToken: next}
	for _, s := range subs[from:to] {
		arn := s.ARN
		if s.Pending {
			arn = pendingListARN
		}
		out.Subscriptions = append(out.Subscriptions, subscriptionMember{
			SubscriptionArn: arn, Owner: q.h.svc.OwnerOf(s.TopicARN), Protocol: s.Protocol, Endpoint: s.Endpoint, TopicArn: s.TopicARN,
		})
	}
	return out, nil
}

func listSubscriptions(q *request) (any, error) { return q.listSubs("") }

func listSubscriptionsByTopic(q *request) (any, error) {
	arn, err := q.required("TopicArn")
	if err != nil {
		return nil, err
	}
	return q.listSubs(arn)
}

func getSubscriptionAttributes(q *request) (any, error) {
	attrs, err := q.h.svc.GetSubscriptionAttributes(q.r.Context(), sns.GetSubscriptionAttributesParams{SubscriptionARN: q.str("SubscriptionArn")})
	if err != nil {
		return nil, err
	}
	return attributesResult{Attributes: entries(attrs)}, nil
}

func setSubscriptionAttributes(q *request) (any, error) {
	name, err := q.required("AttributeName")
	if err != nil {
		return nil, err
	}
	return nil, q.h.svc.SetSubscriptionAttributes(q.r.Context(), sns.SetSubscriptionAttributesParams{SubscriptionARN: q.str("SubscriptionArn"), AttributeName: name, AttributeValue: q.str("AttributeValue")})
}

// publishInput reads one message's parameters from n: the request's, or a
// PublishBatchRequestEntries.member.N.
func (q *request) publishInput(n *awsquery.Node) (sns.PublishParams, error) {
	attrs, err := messageAttributes(n)
	if err != nil {
		return sns.PublishParams{}, err
	}
	return sns.PublishParams{
		Message:                n.Str("Message"),
		Subject:                n.Str("Subject"),
		MessageStructure:       n.Str("MessageStructure"),
		Attributes:             attrs,
		MessageGroupID:         n.Str("MessageGroupId"),
		MessageDeduplicationID: n.Str("MessageDeduplicationId"),
		BaseURL:                q.baseURL(),
		Client:                 q.client,
		TraceHeader:            q.r.Header.Get("X-Amzn-Trace-Id"),
		SubjectSet:             n.Has("Subject"),
	}, nil
}

func publish(q *request) (any, error) {
	in, err := q.publishInput(q.params)
	if err != nil {
		return nil, err
	}
	in.TopicARN = q.str("TopicArn")
	target := in.TopicARN == "" && q.str("TargetArn") != ""
	if target {
		in.TopicARN = q.str("TargetArn")
	}
	if in.TopicARN == "" {
		if q.str("PhoneNumber") != "" {
			return nil, sns.InvalidParameter("PhoneNumber", "tidemq does not send SMS")
		}
		return nil, sns.InvalidParameter("TopicArn or TargetArn", "One of PhoneNumber, TopicArn or TargetArn must be specified.")
	}
	res, err := q.h.svc.Publish(q.r.Context(), in)
	if target && tidemq.HasCode(err, tidemq.ErrSNSNotFound) {
		// AWS's answer for a TargetArn that names nothing (400, not 404).
		return nil, sns.InvalidParameter("TargetArn", "No endpoint found for the target arn specified")
	}
	if err != nil {
		return nil, err
	}
	return struct {
		XMLName        xml.Name `xml:"result"`
		MessageId      string
		SequenceNumber string `xml:",omitempty"`
	}{MessageId: res.MessageID, SequenceNumber: res.SequenceNumber}, nil
}

var batchIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

type batchSuccess struct {
	Id             string
	MessageId      string
	SequenceNumber string `xml:",omitempty"`
}

type batchFailure struct {
	Id          string
	Code        string
	Message     string
	SenderFault bool
}

// failure is the Failed entry of a batch entry that failed with e.
func failure(id string, e *tidemq.Error) batchFailure {
	return batchFailure{Id: id, Code: e.Code.Code, Message: e.Message, SenderFault: e.Code.Fault == tidemq.Sender}
}

func publishBatch(q *request) (any, error) {
	topicARN, err := q.required("TopicArn")
	if err != nil {
		return nil, err
	}
	items := q.params.Child("PublishBatchRequestEntries").Items("member")
	if len(items) == 0 {
		return nil, tidemq.Errorf(tidemq.ErrSNSEmptyBatchRequest, "The batch request doesn't contain any entries.")
	}
	if len(items) > 10 {
		return nil, tidemq.Errorf(tidemq.ErrSNSTooManyEntriesInBatchRequest, "The batch request contains more entries than permissible.")
	}
	var entries []sns.PublishBatchEntry
	seen := map[string]bool{}
	total := 0
	for _, it := range items {
		id := it.Str("Id")
		if !batchIDPattern.MatchString(id) {
			return nil, tidemq.Errorf(tidemq.ErrSNSInvalidBatchEntryID, "The batch entry id %q is not valid.", id)
		}
		if seen[id] {
			return nil, tidemq.Errorf(tidemq.ErrSNSBatchEntryIdsNotDistinct, "Two or more batch entries in the request have the same Id.")
		}
		seen[id] = true
		in, err := q.publishInput(it)
		if err != nil {
			return nil, err // AWS rejects the request, not the entry
		}
		total += len(in.Message)
		for name, a := range in.Attributes {
			total += len(name) + len(a.DataType) + len(a.StringValue) + len(a.BinaryValue)
		}
		entries = append(entries, sns.PublishBatchEntry{ID: id, PublishParams: in})
	}
	if total > sns.MaxMessageSize {
		return nil, tidemq.Errorf(tidemq.ErrSNSBatchRequestTooLong, "The length of all the messages put together is more than the limit.")
	}
	results, err := q.h.svc.PublishBatch(q.r.Context(), sns.PublishBatchParams{TopicARN: topicARN, Entries: entries})
	if err != nil {
		return nil, err
	}
	out := struct {
		XMLName    xml.Name       `xml:"result"`
		Successful []batchSuccess `xml:"Successful>member"`
		Failed     []batchFailure `xml:"Failed>member"`
	}{}
	for _, r := range results {
		if r.Err != nil {
			out.Failed = append(out.Failed, failure(r.ID, r.Err))
			continue
		}
		out.Successful = append(out.Successful, batchSuccess{Id: r.ID, MessageId: r.MessageID, SequenceNumber: r.SequenceNumber})
	}
	return out, nil
}

func addPermission(q *request) (any, error) {
	return nil, q.h.svc.AddPermission(q.r.Context(), sns.AddPermissionParams{TopicARN: q.str("TopicArn"), Label: q.str("Label"), AccountIDs: q.params.Child("AWSAccountId").StrList("member"), Actions: q.params.Child("ActionName").StrList("member")})
}

func removePermission(q *request) (any, error) {
	return nil, q.h.svc.RemovePermission(q.r.Context(), sns.RemovePermissionParams{TopicARN: q.str("TopicArn"), Label: q.str("Label")})
}
