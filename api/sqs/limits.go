package sqs

import (
	"bytes"
	"errors"
	"net/http"

	"github.com/tidemq/tidemq"
)

// MaxRequestBodyBytes bounds every request body the handler reads.
//
// The largest legal request is a SendMessageBatch whose payload (bodies plus
// message attributes, tidemq.MessageSize) is tidemq.MaxMessageSize = 1 MiB.
// Its encoding can be several times larger than the payload:
//
//   - form url-encoding writes most bytes as %XX: at most 3 bytes per byte;
//   - base64 binary attribute values are 4/3 of the raw bytes, and their
//     '+', '/', '=' are url-encoded again in Query: at most 4 bytes per byte;
//   - JSON escapes: a client that writes every character as \uXXXX (Python's
//     ensure_ascii for U+0080..U+07FF, Go's HTML-safe escaping of <, > and
//     &) uses up to 6 bytes per byte of the payload.
//
// So 6 MiB covers the payload in its worst encoding; the other 2 MiB cover
// what the payload does not count (member names and JSON/form structure,
// ids, group and deduplication ids, system attributes). A body beyond the
// bound is answered with RequestEntityTooLarge (HTTP 413) before any of it
// is decoded.
const MaxRequestBodyBytes = 8 << 20

// readBody reads the whole request body, at most MaxRequestBodyBytes.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if r.ContentLength > MaxRequestBodyBytes {
		return nil, errBodyTooLarge()
	}
	// Sized from Content-Length when there is one, so that reading does not
	// grow the buffer several times on every request.
	buf := bytes.NewBuffer(make([]byte, 0, max(r.ContentLength, 0)+bytes.MinRead))
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, MaxRequestBodyBytes))
	body := buf.Bytes()
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, errBodyTooLarge()
		}
		return nil, tidemq.Errorf(tidemq.ErrMalformedInput, "The request body could not be read: %v", err)
	}
	return body, nil
}

func errBodyTooLarge() error {
	return tidemq.Errorf(tidemq.ErrRequestEntityTooLarge,
		"The request body is longer than the limit of %d bytes.", MaxRequestBodyBytes)
}

// Bounds on a Query request's parameters, checked before anything is built
// from them, so that parsing costs memory in proportion to the body and
// never to what a parameter name describes. Each bound is a generous
// multiple of what the largest legal request needs:
//
//   - the deepest legal name is a batch entry's reserved list member,
//     SendMessageBatchRequestEntry.10.MessageAttribute.10.Value.StringListValue.1:
//     7 dot-separated parts (SNS's deepest, ...entry.N.Value.StringValue
//     under PublishBatchRequestEntries.member.N, has 8);
//   - the longest legal names, such as
//     SendMessageBatchRequestEntry.10.MessageSystemAttribute.1.Value.StringValue,
//     are under 80 bytes;
//   - the request with the most parameters is a full SendMessageBatch: 10
//     entries of Id, MessageBody, DelaySeconds, MessageGroupId and
//     MessageDeduplicationId, 10 message attributes of 4 members and one
//     system attribute of 3, that is 10 × 48 = 480, plus Action, Version,
//     QueueUrl and a presigned URL's 7 X-Amz-* parameters: about 490.
//     CreateQueue with every attribute and 50 tags needs about 150.
//
// A request beyond a bound is answered InvalidQueryParameter.
const (
	MaxQueryParams          = 2000 // parameters in the body and URL together, counted as '&'-separated pairs
	MaxQueryParamNameLength = 256  // bytes of a decoded parameter name
	MaxQueryParamDepth      = 16   // dot-separated parts of a parameter name
)
