package console

import (
	"bytes"
	"io"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// AccessKey is the access key the console's own SQS requests carry
// (the redrives it runs message by message): a message's history names it
// as the client that moved the message. It is not a credential: the
// requests never leave the process and reach an SQS handler built without
// an authenticator, behind the console API's own admin check.
const AccessKey = "tidemq-console"

// loopbackEndpoint is the base URL of the console's in-process SQS client:
// the requests are served by Options.SQS directly, nothing is dialled.
const loopbackEndpoint = "http://tidemq-console.internal"

// loopback is an SDK HTTP client that serves each request with a handler
// in this process.
type loopback struct{ h http.Handler }

func (l loopback) Do(req *http.Request) (*http.Response, error) {
	w := &bufferedResponse{header: http.Header{}}
	if req.Body == nil {
		req.Body = http.NoBody
	}
	l.h.ServeHTTP(w, req)
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return &http.Response{
		Status: http.StatusText(w.status), StatusCode: w.status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.header, Body: io.NopCloser(bytes.NewReader(w.body.Bytes())), ContentLength: int64(w.body.Len()), Request: req,
	}, nil
}

// bufferedResponse is the http.ResponseWriter of a loopback request.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *bufferedResponse) Header() http.Header { return w.header }

func (w *bufferedResponse) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *bufferedResponse) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}

// sqsClient is an SDK client of the in-process SQS handler for region
// (the handler serves the region a request is signed for).
func (c *Console) sqsClient(region string) *sqs.Client {
	return sqs.New(sqs.Options{
		Region:       region,
		BaseEndpoint: aws.String(loopbackEndpoint),
		Credentials:  credentials.NewStaticCredentialsProvider(AccessKey, "unused", ""),
		HTTPClient:   loopback{c.o.SQS},
	})
}

// regionOf splits the console's name of a queue ("<region>/<name>" in
// another region, see queueName) into its region and plain name.
func (c *Console) regionOf(name string) (region, plain string) {
	if r, n, ok := strings.Cut(name, "/"); ok {
		return r, n
	}
	if c.o.Region == "" {
		return "us-east-1", name
	}
	return c.o.Region, name
}
