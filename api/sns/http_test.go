package sns_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssns "github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/tidemq/tidemq"
	apisns "github.com/tidemq/tidemq/api/sns"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/sns"
)

// hookRequest is one POST an HTTP subscription endpoint received.
type hookRequest struct {
	header http.Header
	body   string
}

// hook is an HTTP subscription endpoint. Confirmation messages are always
// answered 200; notification number n (from 1) is answered status(n).
type hook struct {
	srv           *httptest.Server
	reqs          chan hookRequest
	notifications atomic.Int32
}

func newHook(t *testing.T, status func(n int) int) *hook {
	h := &hook{reqs: make(chan hookRequest, 100)}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.reqs <- hookRequest{header: r.Header.Clone(), body: string(b)}
		if r.Header.Get("x-amz-sns-message-type") == "Notification" && status != nil {
			w.WriteHeader(status(int(h.notifications.Add(1))))
		}
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// next returns the next request, failing the test after a few seconds.
func (h *hook) next(t *testing.T) hookRequest {
	t.Helper()
	select {
	case r := <-h.reqs:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("the endpoint received nothing")
		return hookRequest{}
	}
}

// none checks that nothing is waiting at the endpoint.
func (h *hook) none(t *testing.T) {
	t.Helper()
	select {
	case r := <-h.reqs:
		t.Fatalf("unexpected request: %v\n%s", r.header, r.body)
	default:
	}
}

func jsonBody(t *testing.T, r hookRequest) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.body), &m); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, r.body)
	}
	return m
}

// verifyConfirmationSignature checks a (Un)SubscriptionConfirmation as SNS
// clients do: SHA1withRSA over Message, MessageId, SubscribeURL,
// Timestamp, Token, TopicArn and Type (every one of them required), with
// the certificate served at SigningCertURL.
func verifyConfirmationSignature(t *testing.T, m map[string]any) {
	t.Helper()
	keys := []string{"Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"}
	for _, k := range keys {
		if _, ok := m[k].(string); !ok {
			t.Fatalf("confirmation without %s: %v", k, m)
		}
	}
	verifySigned(t, m, keys)
}

// confirmHTTP subscribes an endpoint, takes its SubscriptionConfirmation
// and confirms with the token; it returns the subscription ARN.
func (e *env) confirmHTTP(topic string, h *hook, attrs map[string]string) string {
	e.t.Helper()
	if _, err := e.sns.Subscribe(e.ctx, &awssns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("http"),
		Endpoint: aws.String(h.srv.URL + "/hook"), Attributes: attrs}); err != nil {
		e.t.Fatal(err)
	}
	c := jsonBody(e.t, h.next(e.t))
	out, err := e.sns.ConfirmSubscription(e.ctx, &awssns.ConfirmSubscriptionInput{TopicArn: aws.String(topic), Token: aws.String(c["Token"].(string))})
	if err != nil {
		e.t.Fatal(err)
	}
	return aws.ToString(out.SubscriptionArn)
}

func TestHTTPSubscriptionHandshake(t *testing.T) {
	onBothStores(t, checkHTTPSubscriptionHandshake)
}

func checkHTTPSubscriptionHandshake(t *testing.T, e *env) {
	h := newHook(t, nil)
	topic := e.topic("web", nil)

	out, err := e.sns.Subscribe(e.ctx, &awssns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("http"),
		Endpoint: aws.String(h.srv.URL + "/hook")})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(out.SubscriptionArn); got != "pending confirmation" {
		t.Fatalf("Subscribe returned %q", got)
	}

	// The SubscriptionConfirmation: AWS's headers, fields, order, signature.
	req := h.next(t)
	c := jsonBody(t, req)
	if v, ok := req.header["X-Amz-Sns-Subscription-Arn"]; ok {
		t.Errorf("a SubscriptionConfirmation names the subscription (x-amz-sns-subscription-arn: %v); AWS's does not", v)
	}
	var subARN string
	if all, err := e.svc.ListSubscriptions(context.Background(), sns.ListSubscriptionsParams{TopicARN: topic}); err == nil && len(all) == 1 {
		subARN = all[0].ARN
	}
	for k, want := range map[string]string{
		"x-amz-sns-message-type": "SubscriptionConfirmation", "x-amz-sns-message-id": c["MessageId"].(string),
		"x-amz-sns-topic-arn": topic, "Content-Type": "text/plain; charset=UTF-8",
		"User-Agent": "Amazon Simple Notification Service Agent",
	} {
		if got := req.header.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	if !strings.HasPrefix(subARN, topic+":") {
		t.Fatalf("x-amz-sns-subscription-arn = %q", subARN)
	}
	if got := strings.Join(keyOrder(t, req.body), ","); got != "Type,MessageId,Token,TopicArn,Message,SubscribeURL,Timestamp,SignatureVersion,Signature,SigningCertURL" {
		t.Fatalf("confirmation fields = %s", got)
	}
	token := c["Token"].(string)
	if c["Type"] != "SubscriptionConfirmation" || c["TopicArn"] != topic || len(token) < 64 ||
		c["Message"] != "You have chosen to subscribe to the topic "+topic+".\nTo confirm the subscription, visit the SubscribeURL included in this message." ||
		c["SubscribeURL"] != e.srv.URL+"/?Action=ConfirmSubscription&TopicArn="+topic+"&Token="+token {
		t.Fatalf("confirmation = %s", req.body)
	}
	verifyConfirmationSignature(t, c)

	// Pending until confirmed.
	ls, err := e.sns.ListSubscriptionsByTopic(e.ctx, &awssns.ListSubscriptionsByTopicInput{TopicArn: aws.String(topic)})
	if err != nil || len(ls.Subscriptions) != 1 || aws.ToString(ls.Subscriptions[0].SubscriptionArn) != "PendingConfirmation" ||
		aws.ToString(ls.Subscriptions[0].Protocol) != "http" {
		t.Fatalf("ListSubscriptionsByTopic = %+v %v", ls, err)
	}
	ta, _ := e.sns.GetTopicAttributes(e.ctx, &awssns.GetTopicAttributesInput{TopicArn: aws.String(topic)})
	if ta.Attributes["SubscriptionsPending"] != "1" || ta.Attributes["SubscriptionsConfirmed"] != "0" {
		t.Fatalf("topic counts = %v", ta.Attributes)
	}
	sa, _ := e.sns.GetSubscriptionAttributes(e.ctx, &awssns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(subARN)})
	if sa.Attributes["PendingConfirmation"] != "true" {
		t.Fatalf("pending subscription attributes = %v", sa.Attributes)
	}
	if _, err := e.sns.Publish(e.ctx, &awssns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("early")}); err != nil {
		t.Fatal(err)
	}
	_, err = e.sns.ConfirmSubscription(e.ctx, &awssns.ConfirmSubscriptionInput{TopicArn: aws.String(topic), Token: aws.String("bogus")})
	wantCode(t, err, "InvalidParameter")

	// Visiting the SubscribeURL (an unsigned GET) confirms it.
	resp, err := http.Get(c["SubscribeURL"].(string))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "<SubscriptionArn>"+subARN+"</SubscriptionArn>") {
		t.Fatalf("GET SubscribeURL: %d %s", resp.StatusCode, b)
	}
	ls, _ = e.sns.ListSubscriptionsByTopic(e.ctx, &awssns.ListSubscriptionsByTopicInput{TopicArn: aws.String(topic)})
	if aws.ToString(ls.Subscriptions[0].SubscriptionArn) != subARN {
		t.Fatalf("after confirmation: %+v", ls.Subscriptions)
	}
	sa, _ = e.sns.GetSubscriptionAttributes(e.ctx, &awssns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(subARN)})
	if sa.Attributes["PendingConfirmation"] != "false" || sa.Attributes["ConfirmationWasAuthenticated"] != "false" ||
		!strings.Contains(sa.Attributes["EffectiveDeliveryPolicy"], `"numRetries":3`) {
		t.Fatalf("confirmed subscription attributes = %v", sa.Attributes)
	}

	// A raw subscription, confirmed with the API; ReturnSubscriptionArn
	// gives its ARN while it is pending.
	raw := newHook(t, nil)
	rs, err := e.sns.Subscribe(e.ctx, &awssns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("http"),
		Endpoint: aws.String(raw.srv.URL + "/raw"), Attributes: map[string]string{"RawMessageDelivery": "true"}, ReturnSubscriptionArn: true})
	if err != nil {
		t.Fatal(err)
	}
	rawARN := aws.ToString(rs.SubscriptionArn)
	rc := jsonBody(t, raw.next(t))
	conf, err := e.sns.ConfirmSubscription(e.ctx, &awssns.ConfirmSubscriptionInput{TopicArn: aws.String(topic), Token: aws.String(rc["Token"].(string))})
	if err != nil || aws.ToString(conf.SubscriptionArn) != rawARN {
		t.Fatalf("ConfirmSubscription = %v %v, want %s", conf, err, rawARN)
	}

	// Notifications: the envelope, signed; the raw body with its header.
	pub, err := e.sns.Publish(e.ctx, &awssns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("late"), Subject: aws.String("s"),
		MessageAttributes: map[string]snstypes.MessageAttributeValue{"k": {DataType: aws.String("String"), StringValue: aws.String("v")}}})
	if err != nil {
		t.Fatal(err)
	}
	n := h.next(t) // "early" was published before the confirmation: never sent
	env := jsonBody(t, n)
	for k, want := range map[string]string{
		"x-amz-sns-message-type": "Notification", "x-amz-sns-message-id": aws.ToString(pub.MessageId),
		"x-amz-sns-topic-arn": topic, "x-amz-sns-subscription-arn": subARN, "Content-Type": "text/plain; charset=UTF-8",
	} {
		if got := n.header.Get(k); got != want {
			t.Errorf("notification header %s = %q, want %q", k, got, want)
		}
	}
	if env["Message"] != "late" || env["Subject"] != "s" || env["Type"] != "Notification" {
		t.Fatalf("notification = %s", n.body)
	}
	verifySignature(t, env)
	r := raw.next(t)
	if r.body != "late" || r.header.Get("x-amz-sns-rawdelivery") != "true" || r.header.Get("x-amz-sns-subscription-arn") != rawARN {
		t.Fatalf("raw notification: %v %q", r.header, r.body)
	}

	// Unsubscribing sends an UnsubscribeConfirmation whose SubscribeURL
	// restores the subscription.
	if _, err := e.sns.Unsubscribe(e.ctx, &awssns.UnsubscribeInput{SubscriptionArn: aws.String(subARN)}); err != nil {
		t.Fatal(err)
	}
	u := h.next(t)
	uc := jsonBody(t, u)
	if u.header.Get("x-amz-sns-message-type") != "UnsubscribeConfirmation" || u.header.Get("x-amz-sns-subscription-arn") != subARN ||
		uc["Message"] != "You have chosen to deactivate subscription "+subARN+".\nTo cancel this operation and restore the subscription, visit the SubscribeURL included in this message." {
		t.Fatalf("unsubscribe confirmation: %v\n%s", u.header, u.body)
	}
	verifyConfirmationSignature(t, uc)
	ls, _ = e.sns.ListSubscriptionsByTopic(e.ctx, &awssns.ListSubscriptionsByTopicInput{TopicArn: aws.String(topic)})
	if len(ls.Subscriptions) != 1 {
		t.Fatalf("after Unsubscribe: %+v", ls.Subscriptions)
	}
	resp, err = http.Get(uc["SubscribeURL"].(string))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET the restoring SubscribeURL: %v %v", resp, err)
	}
	resp.Body.Close()
	ls, _ = e.sns.ListSubscriptionsByTopic(e.ctx, &awssns.ListSubscriptionsByTopicInput{TopicArn: aws.String(topic)})
	if len(ls.Subscriptions) != 2 {
		t.Fatalf("after restoring: %+v", ls.Subscriptions)
	}
	h.none(t)

	// Bad subscriptions.
	for _, in := range []*awssns.SubscribeInput{
		{TopicArn: aws.String(topic), Protocol: aws.String("https"), Endpoint: aws.String("http://x/")},
		{TopicArn: aws.String(topic), Protocol: aws.String("http"), Endpoint: aws.String("not a url")},
		{TopicArn: aws.String(e.topic("f.fifo", map[string]string{"FifoTopic": "true"})), Protocol: aws.String("http"), Endpoint: aws.String(h.srv.URL)},
		{TopicArn: aws.String(topic), Protocol: aws.String("email"), Endpoint: aws.String("a@b.c")},
	} {
		_, err := e.sns.Subscribe(e.ctx, in)
		wantCode(t, err, "InvalidParameter")
	}
}

// The default HTTP delivery policy (3 retries, 20 s apart) on a fake clock:
// a flaky endpoint gets the message on the third attempt; a dead one
// exhausts the policy and the message goes to the dead-letter queue as the
// endpoint would have received it.
func TestHTTPRetriesAndDeadLetter(t *testing.T) {
	onBothStoresWith(t, func(t *testing.T, open func(func(*sns.Options)) *env) {
		clk := clocktest.New(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
		checkHTTPRetriesAndDeadLetter(t, clk, open(func(o *sns.Options) { o.Clock = clk }))
	})
}

func checkHTTPRetriesAndDeadLetter(t *testing.T, clk *clocktest.Clock, e *env) {
	topic := e.topic("web", nil)
	dlqURL, dlqARN := e.queue("web-dlq", nil)

	flaky := newHook(t, func(n int) int {
		if n <= 2 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	sub := e.confirmHTTP(topic, flaky, nil)
	pub, err := e.sns.Publish(e.ctx, &awssns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("one")})
	if err != nil {
		t.Fatal(err)
	}
	for attempt := 1; attempt <= 3; attempt++ {
		if attempt > 1 {
			if !clk.WaitForTimers(1, 5*time.Second) {
				t.Fatalf("no retry scheduled after attempt %d", attempt-1)
			}
			clk.Advance(19 * time.Second)
			flaky.none(t)
			clk.Advance(time.Second)
		}
		r := flaky.next(t)
		if r.header.Get("x-amz-sns-message-id") != aws.ToString(pub.MessageId) {
			t.Fatalf("attempt %d has message id %q", attempt, r.header.Get("x-amz-sns-message-id"))
		}
	}
	if _, err := e.sns.Unsubscribe(e.ctx, &awssns.UnsubscribeInput{SubscriptionArn: aws.String(sub)}); err != nil {
		t.Fatal(err)
	}
	flaky.next(t) // the UnsubscribeConfirmation

	dead := newHook(t, func(int) int { return http.StatusServiceUnavailable })
	deadSub := e.confirmHTTP(topic, dead, map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + dlqARN + `"}`})
	if _, err := e.sns.Publish(e.ctx, &awssns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("two")}); err != nil {
		t.Fatal(err)
	}
	for attempt := 1; attempt <= 4; attempt++ {
		if attempt > 1 {
			if !clk.WaitForTimers(1, 5*time.Second) {
				t.Fatalf("no retry scheduled after attempt %d", attempt-1)
			}
			clk.Advance(20 * time.Second)
		}
		dead.next(t)
	}
	out, err := e.sqs.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(dlqURL), WaitTimeSeconds: 5})
	if err != nil || len(out.Messages) != 1 {
		t.Fatalf("dead-letter queue: %+v %v", out, err)
	}
	var n map[string]any
	body := aws.ToString(out.Messages[0].Body)
	if err := json.Unmarshal([]byte(body), &n); err != nil || n["Message"] != "two" || n["Type"] != "Notification" ||
		!strings.Contains(n["UnsubscribeURL"].(string), "SubscriptionArn=") {
		t.Fatalf("dead letter = %s (%v)", body, err)
	}
	verifySignature(t, n)
	dead.none(t)
	// The dead letter can be received a moment before it is counted.
	deadline := time.Now().Add(5 * time.Second)
	for e.svc.Stats().DeadLettered == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	st := e.svc.Stats()
	if st.Retries != 5 || st.DeadLettered != 1 || st.Delivered != 1 {
		t.Fatalf("stats = %+v", st)
	}
	_ = deadSub
}

// Without a RedrivePolicy an undeliverable message is logged and counted.
// The retry schedule comes from Options (milliseconds here) and from a
// subscription's DeliveryPolicy.
func TestHTTPUndeliverableIsCounted(t *testing.T) {
	onBothStoresWith(t, func(t *testing.T, open func(func(*sns.Options)) *env) {
		checkHTTPUndeliverableIsCounted(t, open(func(o *sns.Options) {
			o.HTTPRetry = &sns.RetryPolicy{NumRetries: 2, NumNoDelayRetries: 1, MinDelay: time.Millisecond, MaxDelay: time.Millisecond}
		}))
	})
}

func checkHTTPUndeliverableIsCounted(t *testing.T, e *env) {
	topic := e.topic("web", nil)
	h := newHook(t, nil)
	e.confirmHTTP(topic, h, map[string]string{"DeliveryPolicy": `{"healthyRetryPolicy":{"numRetries":1,"numNoDelayRetries":1}}`})
	h.srv.Close() // connection refused from now on
	if _, err := e.sns.Publish(e.ctx, &awssns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("lost")}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for e.svc.Stats().Undeliverable != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("stats = %+v", e.svc.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if st := e.svc.Stats(); st.Retries != 1 || st.DeadLettered != 0 {
		t.Fatalf("stats = %+v", st)
	}
	_, err := e.sns.Subscribe(e.ctx, &awssns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("http"), Endpoint: aws.String("http://x/"),
		Attributes: map[string]string{"DeliveryPolicy": `{"healthyRetryPolicy":{"numRetries":1000}}`}})
	wantCode(t, err, "InvalidParameter")
}

// denyAll is an authenticator that accepts no signature.
type denyAll struct{}

func (denyAll) Authenticate(*http.Request, []byte) (string, error) {
	return "", tidemq.Errorf(tidemq.ErrInvalidClientTokenID, "no credentials are valid here")
}

// With authentication on, the token (ConfirmSubscription) and the
// subscription ARN (Unsubscribe) are credentials enough for unsigned
// requests, as on AWS, unless the subscription was confirmed with
// AuthenticateOnUnsubscribe.
func TestAnonymousConfirmAndUnsubscribe(t *testing.T) {
	onBothStores(t, checkAnonymousConfirmAndUnsubscribe)
}

func checkAnonymousConfirmAndUnsubscribe(t *testing.T, e *env) {
	authed := httptest.NewServer(apisns.NewHandler(apisns.Config{Service: e.svc, Auth: denyAll{}, Logger: slog.New(slog.DiscardHandler)}))
	defer authed.Close()
	viaAuthed := func(u string) (int, string) {
		t.Helper()
		resp, err := http.Get(authed.URL + strings.TrimPrefix(u, e.srv.URL))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := viaAuthed(e.srv.URL + "/?Action=ListTopics"); code != http.StatusForbidden {
		t.Fatalf("unsigned ListTopics: %d", code)
	}
	topic := e.topic("web", nil)
	h := newHook(t, nil)
	if _, err := e.sns.Subscribe(e.ctx, &awssns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("http"), Endpoint: aws.String(h.srv.URL)}); err != nil {
		t.Fatal(err)
	}
	c := jsonBody(t, h.next(t))
	if code, body := viaAuthed(c["SubscribeURL"].(string)); code != 200 {
		t.Fatalf("unsigned confirmation: %d %s", code, body)
	}
	ls, _ := e.sns.ListSubscriptionsByTopic(e.ctx, &awssns.ListSubscriptionsByTopicInput{TopicArn: aws.String(topic)})
	sub := aws.ToString(ls.Subscriptions[0].SubscriptionArn)
	unsubURL := e.srv.URL + "/?Action=Unsubscribe&SubscriptionArn=" + url.QueryEscape(sub)

	// A signed confirmation with AuthenticateOnUnsubscribe protects it.
	if _, err := e.sns.ConfirmSubscription(e.ctx, &awssns.ConfirmSubscriptionInput{TopicArn: aws.String(topic),
		Token: aws.String(c["Token"].(string)), AuthenticateOnUnsubscribe: aws.String("true")}); err != nil {
		t.Fatal(err)
	}
	// (It was confirmed already, so nothing changed: anonymous unsubscribe works.)
	if code, body := viaAuthed(unsubURL); code != 200 {
		t.Fatalf("unsigned Unsubscribe: %d %s", code, body)
	}
	h.next(t) // UnsubscribeConfirmation

	h2 := newHook(t, nil)
	if _, err := e.sns.Subscribe(e.ctx, &awssns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("http"), Endpoint: aws.String(h2.srv.URL)}); err != nil {
		t.Fatal(err)
	}
	c2 := jsonBody(t, h2.next(t))
	conf, err := e.sns.ConfirmSubscription(e.ctx, &awssns.ConfirmSubscriptionInput{TopicArn: aws.String(topic),
		Token: aws.String(c2["Token"].(string)), AuthenticateOnUnsubscribe: aws.String("true")})
	if err != nil {
		t.Fatal(err)
	}
	sa, _ := e.sns.GetSubscriptionAttributes(e.ctx, &awssns.GetSubscriptionAttributesInput{SubscriptionArn: conf.SubscriptionArn})
	if sa.Attributes["ConfirmationWasAuthenticated"] != "true" {
		t.Fatalf("attributes = %v", sa.Attributes)
	}
	if code, body := viaAuthed(e.srv.URL + "/?Action=Unsubscribe&SubscriptionArn=" + url.QueryEscape(aws.ToString(conf.SubscriptionArn))); code != http.StatusForbidden ||
		!strings.Contains(body, "AuthorizationError") {
		t.Fatalf("unsigned Unsubscribe of a protected subscription: %d %s", code, body)
	}
	if _, err := e.sns.Unsubscribe(e.ctx, &awssns.UnsubscribeInput{SubscriptionArn: conf.SubscriptionArn}); err != nil {
		t.Fatalf("signed Unsubscribe: %v", err)
	}
}

// An endpoint that is down holds at most MaxPendingHTTP deliveries in
// memory; the rest are dead-lettered (here: counted, no RedrivePolicy) at
// once rather than piling up.
func TestHTTPBacklogIsBounded(t *testing.T) {
	onBothStoresWith(t, func(t *testing.T, open func(func(*sns.Options)) *env) {
		checkHTTPBacklogIsBounded(t, open(func(o *sns.Options) {
			o.MaxPendingHTTP = 2
			o.HTTPRetry = &sns.RetryPolicy{NumRetries: 3, MinDelay: time.Hour, MaxDelay: time.Hour}
		}))
	})
}

func checkHTTPBacklogIsBounded(t *testing.T, e *env) {
	topic := e.topic("web", nil)
	h := newHook(t, nil)
	e.confirmHTTP(topic, h, nil)
	h.srv.Close() // connection refused from now on
	for i := 0; i < 5; i++ {
		if _, err := e.sns.Publish(e.ctx, &awssns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(fmt.Sprint("m", i))}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for e.svc.Stats().Undeliverable != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("stats = %+v, want 3 undeliverable (2 held for retry)", e.svc.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if st := e.svc.Stats(); st.Undeliverable != 3 || st.Delivered != 0 {
		t.Fatalf("stats = %+v", st)
	}
}

// TestHTTPClientErrorIsNotRetried: an endpoint that answers 4xx (a
// client-side error) is not retried, as on AWS: the message goes to the
// dead-letter queue at once, without waiting for the retry schedule; a
// 429 is retried like a server error.
func TestHTTPClientErrorIsNotRetried(t *testing.T) {
	onBothStoresWith(t, func(t *testing.T, open func(func(*sns.Options)) *env) {
		clk := clocktest.New(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
		checkHTTPClientErrorIsNotRetried(t, clk, open(func(o *sns.Options) { o.Clock = clk }))
	})
}

func checkHTTPClientErrorIsNotRetried(t *testing.T, clk *clocktest.Clock, e *env) {
	topic := e.topic("web4xx", nil)
	dlqURL, dlqARN := e.queue("web4xx-dlq", nil)
	gone := newHook(t, func(int) int { return http.StatusNotFound })
	e.confirmHTTP(topic, gone, map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + dlqARN + `"}`})
	if _, err := e.sns.Publish(e.ctx, &awssns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("lost?")}); err != nil {
		t.Fatal(err)
	}
	gone.next(t)
	out, err := e.sqs.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(dlqURL), WaitTimeSeconds: 5})
	if err != nil || len(out.Messages) != 1 {
		t.Fatalf("dead-letter queue, with the clock not moved: %+v %v", out, err)
	}
	gone.none(t)
	if st := e.svc.Stats(); st.Retries != 0 {
		t.Fatalf("a 404 was retried: %+v", st)
	}

	busy := newHook(t, func(n int) int {
		if n == 1 {
			return http.StatusTooManyRequests
		}
		return http.StatusOK
	})
	e.confirmHTTP(topic, busy, nil)
	if _, err := e.sns.Publish(e.ctx, &awssns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("again")}); err != nil {
		t.Fatal(err)
	}
	busy.next(t)
	gone.next(t) // the 404 endpoint gets this one too, once
	if !clk.WaitForTimers(1, 5*time.Second) {
		t.Fatal("no retry scheduled after a 429")
	}
	clk.Advance(20 * time.Second)
	busy.next(t)
}
