package sns

import (
	"fmt"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
)

func TestRetryPolicySchedules(t *testing.T) {
	schedule := func(p RetryPolicy, n int) string {
		var out []string
		for i := 1; i <= n; i++ {
			d, ok := p.Delay(i)
			if !ok {
				out = append(out, "end")
				break
			}
			out = append(out, d.String())
		}
		return fmt.Sprint(out)
	}
	// AWS's default HTTP/S policy: three retries, 20 seconds apart.
	if got := schedule(DefaultHTTPRetryPolicy, 5); got != "[20s 20s 20s end]" {
		t.Errorf("HTTP default = %s", got)
	}
	// AWS-managed endpoints: 3 immediate, 2 at 1 s, 10 backing off from 1 s
	// to 20 s, then 20 s apart, 100,015 in all.
	if got := schedule(DefaultSQSRetryPolicy, 17); got != "[0s 0s 0s 1s 1s 1s 2s 4s 8s 16s 20s 20s 20s 20s 20s 20s 20s]" {
		t.Errorf("SQS default = %s", got)
	}
	if _, ok := DefaultSQSRetryPolicy.Delay(100015); !ok {
		t.Error("the SQS policy ends early")
	}
	if _, ok := DefaultSQSRetryPolicy.Delay(100016); ok {
		t.Error("the SQS policy does not end")
	}
	lin := RetryPolicy{NumRetries: 5, MinDelay: time.Second, MaxDelay: 5 * time.Second}
	if got := schedule(lin, 6); got != "[1s 2s 3s 4s 5s end]" {
		t.Errorf("linear = %s", got)
	}
	geo := RetryPolicy{NumRetries: 3, MinDelay: time.Second, MaxDelay: 4 * time.Second, BackoffFunction: "geometric"}
	if got := schedule(geo, 3); got != "[1s 2s 4s]" {
		t.Errorf("geometric = %s", got)
	}
}

func TestDeliveryPolicyValidation(t *testing.T) {
	for _, p := range []string{
		`[]`,
		`{"healthyRetryPolicy":{"numRetries":101}}`,
		`{"healthyRetryPolicy":{"minDelayTarget":30,"maxDelayTarget":10}}`,
		`{"healthyRetryPolicy":{"numRetries":2,"numNoDelayRetries":3}}`,
		`{"healthyRetryPolicy":{"backoffFunction":"cubic"}}`,
		`{"healthyRetryPolicy":{"numRetries":100,"minDelayTarget":60,"maxDelayTarget":60}}`, // 6000 s > 3600 s
	} {
		if err := checkSubscriptionDeliveryPolicy(p); err == nil || AsError(err).Code != tidemq.ErrSNSInvalidParameter {
			t.Errorf("%s: %v", p, err)
		}
	}
	if err := checkSubscriptionDeliveryPolicy(`{"healthyRetryPolicy":{"numRetries":5,"minDelayTarget":1,"maxDelayTarget":10,"backoffFunction":"exponential"},"requestPolicy":{"headerContentType":"application/json"}}`); err != nil {
		t.Error(err)
	}
	if err := checkTopicDeliveryPolicy(`{"http":{"defaultHealthyRetryPolicy":{"numRetries":101}}}`); err == nil {
		t.Error("a bad topic policy was accepted")
	}
	s := &Service{httpRetry: DefaultHTTPRetryPolicy}
	p, ct := s.httpPolicy(`{"http":{"defaultHealthyRetryPolicy":{"numRetries":1},"disableSubscriptionOverrides":true,"defaultRequestPolicy":{"headerContentType":"application/json"}}}`,
		`{"healthyRetryPolicy":{"numRetries":9}}`)
	if p.NumRetries != 1 || ct != "application/json" {
		t.Errorf("topic policy without overrides: %+v %s", p, ct)
	}
	p, _ = s.httpPolicy(`{"http":{"defaultHealthyRetryPolicy":{"numRetries":1}}}`, `{"healthyRetryPolicy":{"numRetries":9}}`)
	if p.NumRetries != 9 {
		t.Errorf("subscription override: %+v", p)
	}
}

// A malformed DeliveryPolicy is an InvalidParameter that names the problem
// in the policy's terms, not in Go's.
func TestDeliveryPolicyJSONErrors(t *testing.T) {
	for policy, want := range map[string]string{
		`{"http":5}`: "Invalid parameter: DeliveryPolicy: http must not be a JSON number",
		`[1]`:        "Invalid parameter: DeliveryPolicy: must be a JSON object",
		`{"http":`:   "Invalid parameter: DeliveryPolicy: failed to parse JSON",
		`{"http":{"defaultHealthyRetryPolicy":{"numRetries":"3"}}}`: "Invalid parameter: DeliveryPolicy: http.defaultHealthyRetryPolicy.numRetries must not be a JSON string",
	} {
		err := checkTopicDeliveryPolicy(policy)
		if e := AsError(err); err == nil || e.Code != tidemq.ErrSNSInvalidParameter || e.Message != want {
			t.Errorf("topic %s: %v, want %q", policy, err, want)
		}
	}
	err := checkSubscriptionDeliveryPolicy(`{"healthyRetryPolicy":[]}`)
	if want := "Invalid parameter: DeliveryPolicy: healthyRetryPolicy must not be a JSON array"; err == nil || AsError(err).Message != want {
		t.Errorf("subscription: %v, want %q", err, want)
	}
}
