package sigv4

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"
	"github.com/tidemq/tidemq"
)

// The real SQS client, pointed at a server that authenticates with a
// Verifier on the system clock: the right key gets through, a wrong secret
// is refused with SignatureDoesNotMatch.
func TestSQSClientEndToEnd(t *testing.T) {
	v := &Verifier{Credentials: Credentials{testKey: testSecret}, Services: []string{"sqs"}}
	seen := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		key, err := v.Authenticate(r, body)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if err != nil {
			e := tidemq.AsError(err)
			w.Header().Set("x-amzn-query-error", e.Code.Code+";"+string(e.Code.Fault))
			w.WriteHeader(e.Code.Status)
			fmt.Fprintf(w, `{"__type":%q,"message":%q}`, e.Code.Namespace+"#"+e.Code.Shape, e.Message)
			return
		}
		seen <- key
		fmt.Fprint(w, `{"QueueUrls":["http://localhost/000000000000/my-queue"]}`)
	}))
	defer srv.Close()

	client := func(secret string) *sqs.Client {
		return sqs.New(sqs.Options{
			Region:           "us-east-1",
			BaseEndpoint:     aws.String(srv.URL),
			Credentials:      credentials.NewStaticCredentialsProvider(testKey, secret, ""),
			RetryMaxAttempts: 1,
		})
	}

	out, err := client(testSecret).ListQueues(context.Background(), &sqs.ListQueuesInput{})
	if err != nil {
		t.Fatalf("ListQueues with the right secret: %v", err)
	}
	if got := <-seen; got != testKey {
		t.Errorf("handler saw key %q, want %q", got, testKey)
	}
	if len(out.QueueUrls) != 1 {
		t.Errorf("QueueUrls = %v", out.QueueUrls)
	}

	_, err = client("not-the-secret").ListQueues(context.Background(), &sqs.ListQueuesInput{})
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "SignatureDoesNotMatch" {
		t.Fatalf("ListQueues with a wrong secret: %v, want SignatureDoesNotMatch", err)
	}
}
