package sns

import (
	"encoding/base64"
	"encoding/xml"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/tidemq/tidemq"
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
}

// anonymousActions may be called without an AWS signature even with
// authentication on: the token (ConfirmSubscription) or the subscription
// ARN (Unsubscribe, from a notification's UnsubscribeURL) is the
// credential, as on AWS.
var anonymousActions = map[string]bool{"ConfirmSubscription": true, "Unsubscribe": true}

// IsAction reports whether action is one of the SNS actions tidemq answers.
func IsAction(action string) bool {
	_, ok := actions[action]
	return ok
}

// indices returns the sorted N of every parameter prefix.N.…
func (q *request) indices(prefix string) []int {
	seen := map[int]bool{}
	for k := range q.form {
		rest, ok := strings.CutPrefix(k, prefix+".")
		if !ok {
			continue
		}
		num, _, _ := strings.Cut(rest, ".")
		if n, err := strconv.Atoi(num); err == nil && n > 0 {
			seen[n] = true
		}
	}
	out := make([]int, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

// stringMap reads a non-flattened map: prefix.entry.N.key / .value.
func (q *request) stringMap(prefix string) map[string]string {
	var m map[string]string
	for _, n := range q.indices(prefix + ".entry") {
		p := prefix + ".entry." + strconv.Itoa(n) + "."
		if m == nil {
			m = map[string]string{}
		}
		m[q.form.Get(p+"key")] = q.form.Get(p + "value")
	}
	return m
}

// tags reads Tags.member.N.Key / .Value.
func (q *request) tags() map[string]string {
	var m map[string]string
	for _, n := range q.indices("Tags.member") {
		p := "Tags.member." + strconv.Itoa(n) + "."
		if m == nil {
			m = map[string]string{}
		}
		m[q.form.Get(p+"Key")] = q.form.Get(p + "Value")
	}
	return m
}

// messageAttributes reads prefix.entry.N.Name / .Value.DataType /
// .Value.StringValue / .Value.BinaryValue.
func (q *request) messageAttributes(prefix string) (map[string]sns.Attribute, error) {
	var m map[string]sns.Attribute
	for _, n := range q.indices(prefix + ".entry") {
		p := prefix + ".entry." + strconv.Itoa(n) + "."
		name := q.form.Get(p + "Name")
		a := sns.Attribute{DataType: q.form.Get(p + "Value.DataType"), StringValue: q.form.Get(p + "Value.StringValue")}
		if b64 := q.form.Get(p + "Value.BinaryValue"); b64 != "" {
			b, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				return nil, sns.InvalidParameter("MessageAttributes", "The message attribute '"+name+"' has an invalid binary value.")
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

func (q *request) required(name string) (string, error) {
	v := q.form.Get(name)
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
	t, err := q.h.svc.CreateTopic(name, q.stringMap("Attributes"), q.tags())
	if err != nil {
		return nil, err
	}
	return struct {
		XMLName  xml.Name `xml:"result"`
		TopicArn string
	}{TopicArn: t.ARN}, nil
}

func deleteTopic(q *request) (any, error) {
	return nil, q.h.svc.DeleteTopic(q.form.Get("TopicArn"))
}

type topicMember struct {
	TopicArn string
}

func listTopics(q *request) (any, error) {
	topics := q.h.svc.ListTopics()
	from, to, next, err := page(len(topics), q.form.Get("NextToken"), 100)
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
	attrs, err := q.h.svc.GetTopicAttributes(q.form.Get("TopicArn"))
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
	return nil, q.h.svc.SetTopicAttribute(q.form.Get("TopicArn"), name, q.form.Get("AttributeValue"))
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
	sub, err := q.h.svc.SubscribeWith(sns.SubscribeInput{
		TopicARN: q.form.Get("TopicArn"), Protocol: q.form.Get("Protocol"), Endpoint: q.form.Get("Endpoint"),
		Attributes: q.stringMap("Attributes"), BaseURL: q.baseURL(),
	})
	if err != nil {
		return nil, err
	}
	arn := sub.ARN
	if sub.Pending && !strings.EqualFold(q.form.Get("ReturnSubscriptionArn"), "true") {
		arn = pendingSubscribeARN
	}
	return subscriptionArnResult{SubscriptionArn: arn}, nil
}

func unsubscribe(q *request) (any, error) {
	return nil, q.h.svc.UnsubscribeAs(q.form.Get("SubscriptionArn"), q.anonymous)
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
	switch v := strings.ToLower(q.form.Get("AuthenticateOnUnsubscribe")); v {
	case "", "false":
	case "true":
		authOnUnsub = true
	default:
		return nil, sns.InvalidParameter("AuthenticateOnUnsubscribe", "")
	}
	sub, err := q.h.svc.ConfirmSubscription(topic, token, q.anonymous, authOnUnsub)
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
	if len(q.indices("Tags.member")) > sns.MaxTags {
		return nil, sns.TagLimitExceeded()
	}
	return emptyResult(q.h.svc.TagResource(arn, q.tags()))
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
	var keys []string
	for _, n := range q.indices("TagKeys.member") {
		keys = append(keys, q.form.Get("TagKeys.member."+strconv.Itoa(n)))
	}
	return emptyResult(q.h.svc.UntagResource(arn, keys))
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
	tags, err := q.h.svc.ListTagsForResource(arn)
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
	subs, err := q.h.svc.ListSubscriptions(topicARN)
	if err != nil {
		return nil, err
	}
	from, to, next, err := page(len(subs), q.form.Get("NextToken"), 100)
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
			SubscriptionArn: arn, Owner: q.h.svc.AccountID(), Protocol: s.Protocol, Endpoint: s.Endpoint, TopicArn: s.TopicARN,
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
	attrs, err := q.h.svc.GetSubscriptionAttributes(q.form.Get("SubscriptionArn"))
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
	return nil, q.h.svc.SetSubscriptionAttribute(q.form.Get("SubscriptionArn"), name, q.form.Get("AttributeValue"))
}

// publishInput reads one message's parameters under prefix ("" or
// "PublishBatchRequestEntries.member.N.").
func (q *request) publishInput(prefix string) (sns.PublishInput, error) {
	attrs, err := q.messageAttributes(prefix + "MessageAttributes")
	if err != nil {
		return sns.PublishInput{}, err
	}
	return sns.PublishInput{
		Message:                q.form.Get(prefix + "Message"),
		Subject:                q.form.Get(prefix + "Subject"),
		MessageStructure:       q.form.Get(prefix + "MessageStructure"),
		Attributes:             attrs,
		MessageGroupID:         q.form.Get(prefix + "MessageGroupId"),
		MessageDeduplicationID: q.form.Get(prefix + "MessageDeduplicationId"),
		BaseURL:                q.baseURL(),
		Client:                 q.client,
	}, nil
}

func publish(q *request) (any, error) {
	in, err := q.publishInput("")
	if err != nil {
		return nil, err
	}
	in.TopicARN = q.form.Get("TopicArn")
	if in.TopicARN == "" {
		in.TopicARN = q.form.Get("TargetArn")
	}
	if in.TopicARN == "" {
		if q.form.Get("PhoneNumber") != "" {
			return nil, sns.InvalidParameter("PhoneNumber", "tidemq does not send SMS")
		}
		return nil, sns.InvalidParameter("TopicArn or TargetArn", "One of PhoneNumber, TopicArn or TargetArn must be specified.")
	}
	res, err := q.h.svc.Publish(q.r.Context(), in)
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
	idx := q.indices("PublishBatchRequestEntries.member")
	if len(idx) == 0 {
		return nil, tidemq.Errorf(tidemq.ErrSNSEmptyBatchRequest, "The batch request doesn't contain any entries.")
	}
	if len(idx) > 10 {
		return nil, tidemq.Errorf(tidemq.ErrSNSTooManyEntriesInBatchRequest, "The batch request contains more entries than permissible.")
	}
	var entries []sns.PublishBatchEntry
	var failed []batchFailure
	seen := map[string]bool{}
	total := 0
	for _, n := range idx {
		prefix := "PublishBatchRequestEntries.member." + strconv.Itoa(n) + "."
		id := q.form.Get(prefix + "Id")
		if !batchIDPattern.MatchString(id) {
			return nil, tidemq.Errorf(tidemq.ErrSNSInvalidBatchEntryID, "The batch entry id %q is not valid.", id)
		}
		if seen[id] {
			return nil, tidemq.Errorf(tidemq.ErrSNSBatchEntryIdsNotDistinct, "Two or more batch entries in the request have the same Id.")
		}
		seen[id] = true
		in, err := q.publishInput(prefix)
		if err != nil {
			e := sns.AsError(err)
			failed = append(failed, failure(id, e))
			continue
		}
		total += len(in.Message)
		for name, a := range in.Attributes {
			total += len(name) + len(a.DataType) + len(a.StringValue) + len(a.BinaryValue)
		}
		entries = append(entries, sns.PublishBatchEntry{ID: id, PublishInput: in})
	}
	if total > sns.MaxMessageSize {
		return nil, tidemq.Errorf(tidemq.ErrSNSBatchRequestTooLong, "The length of all the messages put together is more than the limit.")
	}
	results, err := q.h.svc.PublishBatch(q.r.Context(), topicARN, entries)
	if err != nil {
		return nil, err
	}
	out := struct {
		XMLName    xml.Name       `xml:"result"`
		Successful []batchSuccess `xml:"Successful>member"`
		Failed     []batchFailure `xml:"Failed>member"`
	}{Failed: failed}
	for _, r := range results {
		if r.Err != nil {
			out.Failed = append(out.Failed, failure(r.ID, r.Err))
			continue
		}
		out.Successful = append(out.Successful, batchSuccess{Id: r.ID, MessageId: r.MessageID, SequenceNumber: r.SequenceNumber})
	}
	return out, nil
}
