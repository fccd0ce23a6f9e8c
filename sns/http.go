package sns

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
)

// HTTP/HTTPS subscriptions, as AWS runs them: Subscribe posts a signed
// SubscriptionConfirmation (with Token and SubscribeURL) to the endpoint;
// the subscription stays pending until ConfirmSubscription (or a GET of
// the SubscribeURL) presents the token, valid for TokenLifetime.
// Notifications are POSTs of the envelope (or of the bare message with
// RawMessageDelivery), retried by the effective delivery policy on a
// non-2xx answer or a connection error, and dead-lettered when the policy
// is exhausted. Unsubscribing posts an UnsubscribeConfirmation whose
// SubscribeURL restores the subscription.

// TokenLifetime is how long a confirmation token is valid ("Confirmation
// tokens are valid for two days", Subscribe API reference).
const TokenLifetime = 48 * time.Hour

// UserAgent is the User-Agent of SNS's HTTP requests.
const UserAgent = "Amazon Simple Notification Service Agent"

// maxResponseBytes bounds how much of an endpoint's answer is read.
const maxResponseBytes = 64 << 10

func newToken() string {
	b := make([]byte, 128)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// checkHTTPEndpoint checks that endpoint is an absolute URL of protocol.
func checkHTTPEndpoint(protocol, endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme != protocol || u.Host == "" {
		return InvalidParameter("Endpoint", "An "+protocol+" endpoint must be a URL beginning with "+protocol+"://")
	}
	return nil
}

// post sends one POST to an endpoint; a non-2xx answer is an error.
func (s *Service) post(endpoint, contentType string, headers map[string]string, body string) error {
	ctx, cancel := context.WithTimeout(s.ctx, s.opt.HTTPTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		return err
	}
	// The headers AWS's agent sends (an HTTP/1.1 client asking to keep the
	// connection and accepting gzip or deflate); Go's own "Accept-Encoding:
	// gzip" is replaced, and the answer is read only to be discarded.
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set("Connection", "Keep-Alive")
	req.Header.Set("Accept-Encoding", "gzip,deflate")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	select {
	case s.posts <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	resp, err := s.opt.HTTPClient.Do(req)
	<-s.posts
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBytes))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &statusError{code: resp.StatusCode, status: resp.Status}
	}
	return nil
}

// statusError is an endpoint's answer other than 2xx.
type statusError struct {
	code   int
	status string
}

func (e *statusError) Error() string { return "the endpoint answered " + e.status }

// clientSide reports whether an HTTP delivery failed for a client-side
// reason, which AWS does not retry (the message goes to the dead-letter
// queue at once): the endpoint answered 4xx, other than 429 Too Many
// Requests. Server errors, 429 and connection failures are retried by the
// delivery policy (by default three times, 20 seconds apart).
func clientSide(err error) bool {
	var se *statusError
	return errors.As(err, &se) && se.code >= 400 && se.code < 500 && se.code != http.StatusTooManyRequests
}

// postNotification makes one attempt to deliver r to an HTTP/HTTPS
// subscription.
func (s *Service) postNotification(sub *Subscription, r *record) error {
	_, contentType := s.httpPolicy(s.topicDeliveryPolicy(sub.TopicARN), sub.Attributes["DeliveryPolicy"])
	headers := map[string]string{
		"x-amz-sns-message-type":     typeNotification,
		"x-amz-sns-message-id":       r.MessageID,
		"x-amz-sns-topic-arn":        r.TopicARN,
		"x-amz-sns-subscription-arn": sub.ARN,
	}
	msg := r.message(sub.Protocol)
	body := msg
	if sub.Attributes["RawMessageDelivery"] == "true" {
		headers["x-amz-sns-rawdelivery"] = "true"
	} else {
		var err error
		if body, err = s.envelope(r, sub, msg); err != nil {
			return err
		}
	}
	return s.post(sub.Endpoint, contentType, headers, body)
}

// sendConfirmation posts a SubscriptionConfirmation or
// UnsubscribeConfirmation to sub's endpoint in the background, retried by
// the HTTP delivery policy. It is not kept in the outbox: a pending
// subscriber that missed it subscribes again to get another.
func (s *Service) sendConfirmation(t *Topic, sub *Subscription, typ string) {
	messageID := uuid.NewString()
	timestamp := s.opt.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	body, err := s.confirmationMessage(t, sub, typ, messageID, timestamp)
	if err != nil {
		s.log.Error("sns: build a confirmation message", "subscription", sub.ARN, "err", err)
		return
	}
	policy, contentType := s.httpPolicy(t.Attributes["DeliveryPolicy"], sub.Attributes["DeliveryPolicy"])
	headers := map[string]string{
		"x-amz-sns-message-type": typ,
		"x-amz-sns-message-id":   messageID,
		"x-amz-sns-topic-arn":    sub.TopicARN,
	}
	if typ != typeSubscriptionConfirmation {
		// AWS names the subscription on notifications and unsubscribe
		// confirmations, not on the confirmation of a pending one.
		headers["x-amz-sns-subscription-arn"] = sub.ARN
	}
	s.spawn(func() {
		for n := 0; ; n++ {
			if n > 0 {
				delay, ok := policy.Delay(n)
				if !ok {
					s.log.Warn("sns: could not deliver a "+typ+" message; giving up", "subscription", sub.ARN, "endpoint", sub.Endpoint, "err", err)
					return
				}
				if !s.sleep(delay) {
					return
				}
			}
			if err = s.post(sub.Endpoint, contentType, headers, body); err == nil || s.ctx.Err() != nil {
				return
			}
		}
	})
}

// effectiveDeliveryPolicy renders an HTTP/HTTPS subscription's
// EffectiveDeliveryPolicy attribute.
func effectiveDeliveryPolicy(p RetryPolicy, contentType string) string {
	backoff := p.BackoffFunction
	if backoff == "" {
		backoff = "linear"
	}
	b, _ := json.Marshal(map[string]any{
		"healthyRetryPolicy": map[string]any{
			"minDelayTarget": int(p.MinDelay / time.Second), "maxDelayTarget": int(p.MaxDelay / time.Second),
			"numRetries": p.NumRetries, "numNoDelayRetries": p.NumNoDelayRetries,
			"numMinDelayRetries": p.NumMinDelayRetries, "numMaxDelayRetries": p.NumMaxDelayRetries,
			"backoffFunction": backoff,
		},
		"sicklyRetryPolicy": nil,
		"throttlePolicy":    nil,
		"requestPolicy":     map[string]string{"headerContentType": contentType},
		"guaranteed":        false,
	})
	return string(b)
}
