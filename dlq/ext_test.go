package dlq_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/api/sigv4"
	"github.com/tidemq/tidemq/api/sqs"
	"github.com/tidemq/tidemq/dlq"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
)

// authServer is an SQS handler that checks SigV4 signatures (as under
// --auth) for one key pair, in front of which wrap may put a handler of
// its own; targets records the X-Amz-Target of every request.
func authServer(t *testing.T, wrap func(http.Handler) http.Handler) (url string, targets *[]string) {
	t.Helper()
	eng, err := engine.Open(engine.Options{Store: mem.New(), Region: "us-east-1", AccountID: tidemq.DefaultAccountID,
		SweepInterval: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	h := sqs.NewHandler(sqs.Config{Broker: eng, Logger: slog.New(slog.DiscardHandler),
		Auth: &sigv4.Verifier{Credentials: sigv4.Credentials{"AKIDAUTH": "right-secret"}}})
	var next http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("X-Amz-Target"))
		h.ServeHTTP(w, r)
	})
	if wrap != nil {
		next = wrap(next)
	}
	srv := httptest.NewServer(next)
	t.Cleanup(func() {
		srv.Close()
		_ = eng.Close()
	})
	return srv.URL, &seen
}

func authClient(endpoint, secret string, attempts int) *awssqs.Client {
	return awssqs.New(awssqs.Options{
		BaseEndpoint: aws.String(endpoint),
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDAUTH", secret, ""),
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = attempts
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return time.Millisecond, nil })
		}),
	})
}

// The extension calls are signed as every other call of the toolkit:
// against a server that checks signatures, ListQueueStats and
// PeekMessages answer with the right secret and are refused with a wrong
// one (the server's SignatureDoesNotMatch, not an unknown action).
func TestExtensionCallsAreSigned(t *testing.T) {
	url, targets := authServer(t, nil)
	ctx := context.Background()
	good := authClient(url, "right-secret", 1)
	out, err := good.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("orders-dlq")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := good.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: out.QueueUrl, MessageBody: aws.String("lost order")}); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	tool := &dlq.Client{SQS: good, Out: &stdout, Err: &stderr}
	if ok, err := tool.IsTidemq(ctx); err != nil || !ok {
		t.Fatalf("IsTidemq with the right secret = %v, %v; want true", ok, err)
	}
	if err := tool.Peek(ctx, "orders-dlq", dlq.PeekOptions{}); err != nil {
		t.Fatalf("Peek: %v (%s)", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "lost order") {
		t.Errorf("Peek showed %q, want the message", stdout.String())
	}
	var peeked bool
	for _, target := range *targets {
		peeked = peeked || target == "TidemqExtensions.PeekMessages"
	}
	if !peeked {
		t.Errorf("requests %v: no TidemqExtensions.PeekMessages", *targets)
	}

	bad := &dlq.Client{SQS: authClient(url, "wrong-secret", 1), Out: &stdout, Err: &stderr, Mode: dlq.ModeTidemq}
	_, err = bad.DLQs(ctx, "")
	var ext *dlq.ExtError
	if !errors.As(err, &ext) || ext.Code != "SignatureDoesNotMatch" || ext.Status != http.StatusForbidden {
		t.Fatalf("DLQs with a wrong secret: %v (%#v), want SignatureDoesNotMatch, 403", err, ext)
	}
	probe := &dlq.Client{SQS: authClient(url, "wrong-secret", 1)}
	if _, err := probe.IsTidemq(ctx); err == nil {
		t.Error("IsTidemq with a wrong secret: no error, want the refusal (not a fallback to plain SQS)")
	}
}

// An extension call answered with a 5xx is retried by the SQS client's
// retryer, as every other call is.
func TestExtensionCallsRetry5xx(t *testing.T) {
	var failures atomic.Int32
	url, _ := authServer(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.Header.Get("X-Amz-Target"), "TidemqExtensions.") && failures.Add(1) <= 2 {
				w.Header().Set("Content-Type", "application/x-amz-json-1.0")
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte(`{"__type":"com.amazonaws.sqs#ServiceUnavailable","message":"try again"}`))
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	ctx := context.Background()
	tool := &dlq.Client{SQS: authClient(url, "right-secret", 3)}
	if ok, err := tool.IsTidemq(ctx); err != nil || !ok {
		t.Fatalf("IsTidemq after two 503s = %v, %v; want true on the third attempt", ok, err)
	}
	if n := failures.Load(); n != 3 {
		t.Errorf("%d extension requests, want 3 (two 503s, then the answer)", n)
	}
	// Past the retryer's attempts the 503 is the error.
	tool = &dlq.Client{SQS: authClient(url, "right-secret", 2), Mode: dlq.ModeTidemq}
	failures.Store(0)
	_, err := tool.DLQs(ctx, "")
	var ext *dlq.ExtError
	if !errors.As(err, &ext) || ext.Status != http.StatusServiceUnavailable {
		t.Fatalf("DLQs with 503s past the attempts: %v, want the 503", err)
	}
}

// A proxy's 502 with an empty body (tidemq restarting behind a load
// balancer), still there after the retries, is an error of the probe: it
// says nothing of what the endpoint is, so the client does not settle on
// plain SQS for the rest of its life; once the endpoint answers, it is
// tidemq.
func TestProbeThroughAFailingProxyIsNotAWS(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	url, _ := authServer(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if down.Load() {
				w.WriteHeader(http.StatusBadGateway)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	ctx := context.Background()
	tool := &dlq.Client{SQS: authClient(url, "right-secret", 2)}
	if ok, err := tool.IsTidemq(ctx); err == nil {
		t.Fatalf("IsTidemq through a 502 = %v, nil; want the error", ok)
	}
	down.Store(false)
	if ok, err := tool.IsTidemq(ctx); err != nil || !ok {
		t.Fatalf("IsTidemq once the endpoint answers = %v, %v; want true", ok, err)
	}
}
