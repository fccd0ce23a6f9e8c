package dlq

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// ExtError is an error answer to an extension call.
type ExtError struct {
	Status  int
	Code    string
	Message string
	// Err is the SDK's error.
	Err error
}

func (e *ExtError) Error() string {
	return fmt.Sprintf("%s (HTTP %d): %s", e.Code, e.Status, e.Message)
}

func (e *ExtError) Unwrap() error { return e.Err }

// isUnknownOperation tells "this endpoint has no such action" (AWS, or
// anything that is not tidemq) from a real error answered by tidemq.
func isUnknownOperation(err error) bool {
	var e *ExtError
	if !errors.As(err, &e) {
		return false
	}
	if e.Status >= 500 || e.Status == http.StatusTooManyRequests {
		// A server error or a throttle (a proxy's 502 while tidemq
		// restarts, say) tells nothing of what the endpoint is.
		return false
	}
	switch e.Code {
	case "UnknownOperationException", "UnknownOperation", "InvalidAction", "UnsupportedOperation",
		"AWS.SimpleQueueService.UnsupportedOperation":
		return true
	case "UnknownError", "":
		// An answer without a code: only a 400 or 404 says "no such
		// action".
		return e.Status == http.StatusBadRequest || e.Status == http.StatusNotFound
	}
	return e.Status == http.StatusNotFound
}

// maxExtAnswer bounds an extension's answer read into memory.
const maxExtAnswer = 64 << 20

// ext calls one of tidemq's extension actions (TidemqExtensions.<action>,
// AWS JSON 1.0) through the SQS client itself, so that the call is what
// every other call of the toolkit is: the client's endpoint, credentials
// and SigV4 signature, its retryer (throttles and 5xx answers are
// retried), its HTTP client. The client sends a ListQueues whose body and
// X-Amz-Target are replaced after serialization, before signing; a 2xx
// answer is taken raw before the SDK would decode it as ListQueues', an
// error answer is decoded by the SDK as any other.
func (c *Client) ext(ctx context.Context, action string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	var answer []byte
	_, err = c.SQS.ListQueues(ctx, &sqs.ListQueuesInput{}, func(o *sqs.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			if err := stack.Serialize.Add(extRequest{action: action, body: body}, middleware.After); err != nil {
				return err
			}
			return stack.Deserialize.Add(extAnswer{into: &answer}, middleware.After)
		})
	})
	if err != nil {
		return extError(err)
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fmt.Errorf("TidemqExtensions.%s: bad answer: %w", action, err)
	}
	return nil
}

// extError is the SDK's error of an answered call as an *ExtError; an
// error without an answer (the network, the context) is returned as is.
func extError(err error) error {
	var re interface{ HTTPStatusCode() int }
	if !errors.As(err, &re) {
		return err
	}
	status := re.HTTPStatusCode()
	var ae smithy.APIError
	if status >= 200 && status < 300 && !errors.As(err, &ae) {
		// Answered, but the answer could not be read: not an error
		// answer of the endpoint (which isUnknownOperation would take
		// for "no such action").
		return fmt.Errorf("reading the answer: %w", err)
	}
	e := &ExtError{Status: status, Err: err}
	if errors.As(err, &ae) {
		e.Code, e.Message = ae.ErrorCode(), ae.ErrorMessage()
	}
	return e
}

// extRequest turns the serialized request into the extension's.
type extRequest struct {
	action string
	body   []byte
}

func (extRequest) ID() string { return "TidemqExtensionRequest" }

func (m extRequest) HandleSerialize(ctx context.Context, in middleware.SerializeInput, next middleware.SerializeHandler) (
	middleware.SerializeOutput, middleware.Metadata, error,
) {
	req, ok := in.Request.(*smithyhttp.Request)
	if !ok {
		return middleware.SerializeOutput{}, middleware.Metadata{}, fmt.Errorf("unexpected transport type %T", in.Request)
	}
	req.Header.Set("X-Amz-Target", "TidemqExtensions."+m.action)
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	sreq, err := req.SetStream(bytes.NewReader(m.body))
	if err != nil {
		return middleware.SerializeOutput{}, middleware.Metadata{}, err
	}
	in.Request = sreq
	return next.HandleSerialize(ctx, in)
}

// extAnswer keeps a 2xx answer's body and hands the SDK's decoder an
// empty one in its place.
type extAnswer struct{ into *[]byte }

func (extAnswer) ID() string { return "TidemqExtensionAnswer" }

func (m extAnswer) HandleDeserialize(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (
	middleware.DeserializeOutput, middleware.Metadata, error,
) {
	out, md, err := next.HandleDeserialize(ctx, in)
	if err != nil {
		return out, md, err
	}
	resp, ok := out.RawResponse.(*smithyhttp.Response)
	if !ok || resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return out, md, err
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxExtAnswer))
	resp.Body.Close()
	if err != nil {
		return out, md, &smithy.DeserializationError{Err: err}
	}
	*m.into = data
	resp.Body = io.NopCloser(strings.NewReader(""))
	return out, md, nil
}
