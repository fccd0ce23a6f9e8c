package sqs

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/api/awsquery"
)

// jsonContentType is the content type of AWS JSON 1.0 requests and responses.
const jsonContentType = "application/x-amz-json-1.0"

// decodeJSON unmarshals a JSON 1.0 request body into in. An empty body is
// an empty object. Bodies that are not a JSON object are SerializationException;
// members of the wrong type are InvalidParameterValue.
func decodeJSON(body []byte, in any) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil
	}
	if body[0] != '{' {
		return tidemq.Errorf(tidemq.ErrMalformedInput, "The request body must be a JSON object.")
	}
	if err := checkJSONMembers(body); err != nil {
		return err
	}
	if err := checkJSONStrings(body); err != nil {
		return err
	}
	err := json.Unmarshal(body, in)
	if err == nil {
		return nil
	}
	var typeErr *json.UnmarshalTypeError
	var b64Err base64.CorruptInputError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return tidemq.Errorf(tidemq.ErrInvalidParameterValue,
			"Value for parameter %s is invalid. Reason: expected %s, found a JSON %s.",
			typeErr.Field, jsonTypeName(typeErr.Type.Kind().String()), typeErr.Value)
	case errors.As(err, &b64Err):
		return tidemq.Errorf(tidemq.ErrInvalidParameterValue,
			"Value for parameter BinaryValue is invalid. Reason: it is not valid base64 (at byte %d).", int64(b64Err))
	}
	return tidemq.Errorf(tidemq.ErrMalformedInput, "The request body is not valid JSON.")
}

// jsonTypeName names a Go kind the way a client would think of the member.
func jsonTypeName(kind string) string {
	switch kind {
	case "int", "int32", "int64":
		return "an integer"
	case "string":
		return "a string"
	case "slice":
		return "a list"
	case "map", "struct":
		return "an object"
	case "bool":
		return "a boolean"
	}
	return kind
}

// writeJSONOutput writes a successful JSON 1.0 response; actions without
// output answer {}.
func (c *call) writeJSONOutput(w http.ResponseWriter, out output) int {
	if out == nil {
		return c.writeJSONBody(w, http.StatusOK, []byte("{}"))
	}
	buf := outputBuffers.Get().(*bytes.Buffer)
	defer putOutputBuffer(buf)
	buf.Reset()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return c.writeError(w, err)
	}
	return c.writeJSONBody(w, http.StatusOK, bytes.TrimRight(buf.Bytes(), "\n"))
}

// outputBuffers holds response buffers between requests: a receive of ten
// messages otherwise grows a new buffer several times per answer.
var outputBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putOutputBuffer returns buf to the pool unless it grew past what most
// answers need (one large answer must not pin its memory for ever).
func putOutputBuffer(buf *bytes.Buffer) {
	if buf.Cap() <= 64<<10 {
		outputBuffers.Put(buf)
	}
}

// jsonError is the body of a JSON 1.0 error.
type jsonError struct {
	Type    string `json:"__type"`
	Message string `json:"message"`
}

// writeJSONError writes a JSON 1.0 error: the modeled shape in __type (so
// SDKs resolve their modeled error types) and the legacy Query code in
// x-amzn-query-error (so query-compatible SDKs report it as the error code,
// as they do against AWS).
func (c *call) writeJSONError(w http.ResponseWriter, e *tidemq.Error) int {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(jsonError{Type: e.Code.Namespace + "#" + e.Code.Shape, Message: e.Message})
	w.Header().Set("X-Amzn-Query-Error", e.Code.Code+";"+string(e.Code.Fault))
	return c.writeJSONBody(w, e.Code.Status, bytes.TrimRight(buf.Bytes(), "\n"))
}

func (c *call) writeJSONBody(w http.ResponseWriter, status int, body []byte) int {
	c.setCommonHeaders(w, jsonContentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
	return status
}

// checkJSONMembers bounds the members of a JSON request, objects at every
// depth counted together, by awsquery.MaxParams: the bound of a Query
// request's parameters, for the same reason (the largest legal request,
// a full SendMessageBatch, has about 500). Counted in one pass before
// anything is decoded, so that a signed CreateQueue with 500,000
// attribute names is refused for the cost of reading it (it took 2.5 s of
// CPU to decode and validate).
func checkJSONMembers(body []byte) error {
	n := 0
	for i := 0; i < len(body); {
		if body[i] != '"' {
			i++
			continue
		}
		end := jsonStringEnd(body, i)
		if end < 0 {
			return nil // unterminated: a syntax error, for json.Unmarshal
		}
		j := end
		for j < len(body) && (body[j] == ' ' || body[j] == '\t' || body[j] == '\n' || body[j] == '\r') {
			j++
		}
		if j < len(body) && body[j] == ':' {
			if n++; n > awsquery.MaxParams {
				return tidemq.Errorf(tidemq.ErrInvalidParameterValue,
					"The request has more than %d members.", awsquery.MaxParams)
			}
		}
		i = j
	}
	return nil
}
