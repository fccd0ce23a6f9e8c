package sns

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/tidemq/tidemq"
)

// RetryPolicy is an SNS delivery retry policy: after the first attempt,
// NumNoDelayRetries retries at once, then NumMinDelayRetries retries MinDelay
// apart, then the backoff phase (the retries left after the other phases)
// whose delays grow from MinDelay to MaxDelay by BackoffFunction, then
// NumMaxDelayRetries retries MaxDelay apart. NumRetries counts them all.
//
// AWS applies jitter and does not publish its backoff curves; tidemq's
// curves are deterministic: linear and arithmetic (quadratic) interpolate
// between MinDelay and MaxDelay, geometric multiplies by a constant ratio,
// exponential doubles from MinDelay and is capped at MaxDelay.
type RetryPolicy struct {
	NumRetries         int
	NumNoDelayRetries  int
	NumMinDelayRetries int
	NumMaxDelayRetries int
	MinDelay, MaxDelay time.Duration
	BackoffFunction    string // linear (the default), arithmetic, geometric or exponential
}

// DefaultHTTPRetryPolicy is AWS's default HTTP/S delivery policy: three
// retries, 20 seconds apart.
var DefaultHTTPRetryPolicy = RetryPolicy{NumRetries: 3, MinDelay: 20 * time.Second, MaxDelay: 20 * time.Second, BackoffFunction: "linear"}

// DefaultSQSRetryPolicy is AWS's policy for AWS-managed endpoints (SQS,
// Lambda): 3 immediate retries, 2 one second apart, 10 with exponential
// backoff from 1 to 20 seconds, then 100,000 retries 20 seconds apart (about
// 23 days). tidemq applies it to SQS deliveries that fail for a server-side
// reason (a storage error, say); a missing queue fails at once.
var DefaultSQSRetryPolicy = RetryPolicy{NumRetries: 100015, NumNoDelayRetries: 3, NumMinDelayRetries: 2, NumMaxDelayRetries: 100000,
	MinDelay: time.Second, MaxDelay: 20 * time.Second, BackoffFunction: "exponential"}

// Delay returns how long to wait before retry number n (1 for the first
// retry), and false when the policy has no retry n.
func (p RetryPolicy) Delay(n int) (time.Duration, bool) {
	if n < 1 || n > p.NumRetries {
		return 0, false
	}
	if n <= p.NumNoDelayRetries {
		return 0, true
	}
	n -= p.NumNoDelayRetries
	if n <= p.NumMinDelayRetries {
		return p.MinDelay, true
	}
	n -= p.NumMinDelayRetries
	backoff := p.NumRetries - p.NumNoDelayRetries - p.NumMinDelayRetries - p.NumMaxDelayRetries
	if n > backoff {
		return p.MaxDelay, true
	}
	t := 1.0
	if backoff > 1 {
		t = float64(n-1) / float64(backoff-1)
	}
	lo, hi := float64(p.MinDelay), float64(p.MaxDelay)
	var d float64
	switch p.BackoffFunction {
	case "arithmetic":
		d = lo + (hi-lo)*t*t
	case "geometric":
		if lo <= 0 {
			d = lo + (hi-lo)*t
		} else {
			d = lo * math.Pow(hi/lo, t)
		}
	case "exponential":
		d = math.Min(lo*math.Pow(2, float64(n-1)), hi)
	default: // linear
		d = lo + (hi-lo)*t
	}
	return time.Duration(d), true
}

// healthyRetryPolicy is the JSON form of a retry policy (delays in
// seconds), as in a DeliveryPolicy.
type healthyRetryPolicy struct {
	MinDelayTarget     *int   `json:"minDelayTarget"`
	MaxDelayTarget     *int   `json:"maxDelayTarget"`
	NumRetries         *int   `json:"numRetries"`
	NumNoDelayRetries  *int   `json:"numNoDelayRetries"`
	NumMinDelayRetries *int   `json:"numMinDelayRetries"`
	NumMaxDelayRetries *int   `json:"numMaxDelayRetries"`
	BackoffFunction    string `json:"backoffFunction"`
}

type requestPolicy struct {
	HeaderContentType string `json:"headerContentType"`
}

// subscriptionDeliveryPolicy is a subscription's DeliveryPolicy attribute.
type subscriptionDeliveryPolicy struct {
	HealthyRetryPolicy *healthyRetryPolicy `json:"healthyRetryPolicy"`
	RequestPolicy      *requestPolicy      `json:"requestPolicy"`
	ThrottlePolicy     json.RawMessage     `json:"throttlePolicy"`
	SicklyRetryPolicy  json.RawMessage     `json:"sicklyRetryPolicy"`
	Guaranteed         json.RawMessage     `json:"guaranteed"`
}

// topicDeliveryPolicy is a topic's DeliveryPolicy attribute; only its
// "http" part concerns tidemq.
type topicDeliveryPolicy struct {
	HTTP *struct {
		DefaultHealthyRetryPolicy    *healthyRetryPolicy `json:"defaultHealthyRetryPolicy"`
		DisableSubscriptionOverrides bool                `json:"disableSubscriptionOverrides"`
		DefaultRequestPolicy         *requestPolicy      `json:"defaultRequestPolicy"`
		DefaultThrottlePolicy        json.RawMessage     `json:"defaultThrottlePolicy"`
		DefaultSicklyRetryPolicy     json.RawMessage     `json:"defaultSicklyRetryPolicy"`
	} `json:"http"`
}

// maxPolicyRetryTime is AWS's hard limit on an HTTP/S policy's total retry
// time.
const maxPolicyRetryTime = 3600 * time.Second

// policy checks h and applies it over base.
func (h *healthyRetryPolicy) policy(base RetryPolicy) (RetryPolicy, error) {
	p := base
	set := func(dst *int, v *int, name string, limit int) error {
		if v == nil {
			return nil
		}
		if *v < 0 || *v > limit {
			return fmt.Errorf("%s must be between 0 and %d", name, limit)
		}
		*dst = *v
		return nil
	}
	var minS, maxS = int(p.MinDelay / time.Second), int(p.MaxDelay / time.Second)
	for _, f := range []error{
		set(&p.NumRetries, h.NumRetries, "numRetries", 100),
		set(&p.NumNoDelayRetries, h.NumNoDelayRetries, "numNoDelayRetries", 100),
		set(&p.NumMinDelayRetries, h.NumMinDelayRetries, "numMinDelayRetries", 100),
		set(&p.NumMaxDelayRetries, h.NumMaxDelayRetries, "numMaxDelayRetries", 100),
		set(&minS, h.MinDelayTarget, "minDelayTarget", 3600),
		set(&maxS, h.MaxDelayTarget, "maxDelayTarget", 3600),
	} {
		if f != nil {
			return p, f
		}
	}
	if h.MinDelayTarget != nil {
		p.MinDelay = time.Duration(minS) * time.Second
	}
	if h.MaxDelayTarget != nil {
		p.MaxDelay = time.Duration(maxS) * time.Second
	}
	if p.MinDelay > p.MaxDelay {
		return p, fmt.Errorf("minDelayTarget must not be greater than maxDelayTarget")
	}
	if p.NumNoDelayRetries+p.NumMinDelayRetries+p.NumMaxDelayRetries > p.NumRetries {
		return p, fmt.Errorf("numNoDelayRetries + numMinDelayRetries + numMaxDelayRetries must not exceed numRetries")
	}
	switch h.BackoffFunction {
	case "":
	case "linear", "arithmetic", "geometric", "exponential":
		p.BackoffFunction = h.BackoffFunction
	default:
		return p, fmt.Errorf("backoffFunction must be linear, arithmetic, geometric or exponential")
	}
	var total time.Duration
	for n := 1; n <= p.NumRetries; n++ {
		d, _ := p.Delay(n)
		total += d
	}
	if total > maxPolicyRetryTime {
		return p, fmt.Errorf("the total retry time of the policy must not exceed 3600 seconds")
	}
	return p, nil
}

// deliveryPolicyError words a DeliveryPolicy problem like the other
// policies' ("Invalid parameter: DeliveryPolicy: <reason>").
func deliveryPolicyError(reason string) *tidemq.Error {
	return &tidemq.Error{Code: tidemq.ErrSNSInvalidParameter, Message: "Invalid parameter: DeliveryPolicy: " + reason}
}

// jsonProblem words a JSON decoding error for a client, without Go's type
// names.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return "must be a JSON object"
		}
		return te.Field + " must not be a JSON " + te.Value
	}
	return "failed to parse JSON"
}

// checkSubscriptionDeliveryPolicy validates a subscription DeliveryPolicy.
func checkSubscriptionDeliveryPolicy(v string) error {
	var p subscriptionDeliveryPolicy
	if err := json.Unmarshal([]byte(v), &p); err != nil {
		return deliveryPolicyError(jsonProblem(err))
	}
	if p.HealthyRetryPolicy != nil {
		if _, err := p.HealthyRetryPolicy.policy(DefaultHTTPRetryPolicy); err != nil {
			return deliveryPolicyError(err.Error())
		}
	}
	return nil
}

// checkTopicDeliveryPolicy validates a topic DeliveryPolicy.
func checkTopicDeliveryPolicy(v string) error {
	var p topicDeliveryPolicy
	if err := json.Unmarshal([]byte(v), &p); err != nil {
		return deliveryPolicyError(jsonProblem(err))
	}
	if p.HTTP != nil && p.HTTP.DefaultHealthyRetryPolicy != nil {
		if _, err := p.HTTP.DefaultHealthyRetryPolicy.policy(DefaultHTTPRetryPolicy); err != nil {
			return deliveryPolicyError(err.Error())
		}
	}
	return nil
}

// httpPolicy returns the retry policy and Content-Type of deliveries to an
// HTTP/S subscription: the subscription's policy unless the topic disables
// overrides, else the topic's, else the service default.
func (s *Service) httpPolicy(topicPolicy, subPolicy string) (RetryPolicy, string) {
	retry, contentType := s.httpRetry, "text/plain; charset=UTF-8"
	var tp topicDeliveryPolicy
	if topicPolicy != "" && json.Unmarshal([]byte(topicPolicy), &tp) == nil && tp.HTTP != nil {
		if h := tp.HTTP.DefaultHealthyRetryPolicy; h != nil {
			if p, err := h.policy(retry); err == nil {
				retry = p
			}
		}
		if r := tp.HTTP.DefaultRequestPolicy; r != nil && r.HeaderContentType != "" {
			contentType = r.HeaderContentType
		}
		if tp.HTTP.DisableSubscriptionOverrides {
			return retry, contentType
		}
	}
	var sp subscriptionDeliveryPolicy
	if subPolicy != "" && json.Unmarshal([]byte(subPolicy), &sp) == nil {
		if h := sp.HealthyRetryPolicy; h != nil {
			if p, err := h.policy(retry); err == nil {
				retry = p
			}
		}
		if r := sp.RequestPolicy; r != nil && r.HeaderContentType != "" {
			contentType = r.HeaderContentType
		}
	}
	return retry, contentType
}
