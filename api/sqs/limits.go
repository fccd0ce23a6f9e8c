package sqs

import (
	"net/http"

	"github.com/tidemq/tidemq/api/awsquery"
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
	return awsquery.ReadBody(w, r, MaxRequestBodyBytes)
}

// The bounds on a Query request's parameters are awsquery's (MaxParams,
// MaxParamNameLength, MaxParamDepth), shared with SNS.
