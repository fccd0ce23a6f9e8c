package awsquery

import (
	"bytes"
	"errors"
	"net/http"

	"github.com/tidemq/tidemq"
)

// Bounds on a Query request's parameters, checked before anything is built
// from them, so that parsing costs memory in proportion to the body and
// never to what a parameter name describes. Each bound is a generous
// multiple of what the largest legal request of either service needs:
//
//   - the deepest legal names are SQS's batch entries' reserved list
//     members, SendMessageBatchRequestEntry.10.MessageAttribute.10.Value.StringListValue.1
//     (7 dot-separated parts), and SNS's batch entries' attributes,
//     PublishBatchRequestEntries.member.10.MessageAttributes.entry.10.Value.StringValue
//     (8 parts);
//   - the longest legal names, such as
//     SendMessageBatchRequestEntry.10.MessageSystemAttribute.1.Value.StringValue
//     and the SNS name above, are under 90 bytes;
//   - the request with the most parameters is a full SendMessageBatch: 10
//     entries of Id, MessageBody, DelaySeconds, MessageGroupId and
//     MessageDeduplicationId, 10 message attributes of 4 members and one
//     system attribute of 3, that is 10 × 48 = 480, plus Action, Version,
//     QueueUrl and a presigned URL's 7 X-Amz-* parameters: about 490. A
//     full PublishBatch needs about as many (10 entries of 6 members and
//     10 attributes of 4); CreateQueue with every attribute and 50 tags
//     needs about 150.
//
// A request beyond a bound is answered InvalidQueryParameter.
const (
	MaxParams          = 2000 // parameters in the body and URL together, counted as '&'-separated pairs
	MaxParamNameLength = 256  // bytes of a decoded parameter name
	MaxParamDepth      = 16   // dot-separated parts of a parameter name
)

// ReadBody reads the whole request body, at most limit bytes. A body beyond
// the limit is answered RequestEntityTooLarge (HTTP 413) before any of it
// is decoded, and one that cannot be read MalformedInput.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if r.ContentLength > limit {
		return nil, errBodyTooLarge(limit)
	}
	// A claimed length is not trusted with memory before the bytes arrive:
	// the buffer is sized from Content-Length only for a large body, which
	// the front door charged to its body budget before the request got
	// here; a small claim gets a small buffer that grows as bytes come.
	// (Presized from every claim, thousands of unsigned HTTP/2 streams
	// claiming 64 KiB and sending nothing pinned 64 KiB each.)
	size := r.ContentLength
	if size <= paidBody {
		size = min(max(size, 0), unpaidPrealloc)
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit))
	body := buf.Bytes()
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, errBodyTooLarge(limit)
		}
		return nil, tidemq.UnreadableBody(err)
	}
	return body, nil
}

// paidBody is the size above which api/frontdoor charges a body to its
// budget (frontdoor.LargeBody); unpaidPrealloc is what a smaller claim may
// have allocated before its bytes arrive.
const (
	paidBody       = 64 << 10
	unpaidPrealloc = 4 << 10
)

func errBodyTooLarge(limit int64) error {
	return tidemq.Errorf(tidemq.ErrRequestEntityTooLarge,
		"The request body is longer than the limit of %d bytes.", limit)
}
