package sqs

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"strings"

	"github.com/tidemq/tidemq"
)

// The JSON form of the Query protocol: a Query request (GET or POST) with
// Accept: application/json is answered, as SQS answers it, with the XML
// response's structure in JSON:
//
//	{"GetQueueUrlResponse": {"GetQueueUrlResult": {"QueueUrl": "..."},
//	                         "ResponseMetadata": {"RequestId": "..."}}}
//
// The result holds the members of the JSON protocol's output, and an error
// is {"Error": {"Type": "Sender", "Code": "<legacy code>", "Message": "..."},
// "RequestId": "..."} with the error's status.

// queryJSONContentType is the Content-Type of such answers.
const queryJSONContentType = "application/json"

// acceptsJSON reports whether the request's Accept header asks for JSON.
func acceptsJSON(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == "application/json" {
			return true
		}
	}
	return false
}

type queryJSONMetadata struct {
	RequestID string `json:"RequestId"`
}

func (c *call) writeQueryJSONOutput(w http.ResponseWriter, out output) int {
	resp := map[string]any{"ResponseMetadata": queryJSONMetadata{RequestID: c.requestID}}
	if out != nil {
		resp[c.action+"Result"] = queryJSONResult(out)
	}
	return c.writeQueryJSON(w, http.StatusOK, map[string]any{c.action + "Response": resp})
}

// queryJSONResult is a result as AWS renders it in this form, where it
// differs from the JSON protocol's output: a received message list is
// "messages" (AWS-recorded: ReceiveMessageResult.messages), null when the
// receive is empty.
func queryJSONResult(out output) any {
	if r, ok := out.(*receiveMessageOutput); ok {
		return struct {
			Messages []wireMessage `json:"messages"`
		}{r.Messages}
	}
	return out
}

type queryJSONError struct {
	Type    string `json:"Type"`
	Code    string `json:"Code"`
	Message string `json:"Message"`
}

func (c *call) writeQueryJSONError(w http.ResponseWriter, e *tidemq.Error) int {
	return c.writeQueryJSON(w, e.Code.Status, struct {
		Error     queryJSONError `json:"Error"`
		RequestID string         `json:"RequestId"`
	}{queryJSONError{Type: string(e.Code.Fault), Code: e.Code.Code, Message: queryMessage(e)}, c.requestID})
}

func (c *call) writeQueryJSON(w http.ResponseWriter, status int, v any) int {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		e := tidemq.InternalFailure()
		status = e.Code.Status
		buf.Reset()
		_ = enc.Encode(map[string]any{"Error": queryJSONError{Type: string(e.Code.Fault), Code: e.Code.Code, Message: e.Message}})
	}
	c.setCommonHeaders(w, queryJSONContentType)
	w.WriteHeader(status)
	_, _ = w.Write(bytes.TrimRight(buf.Bytes(), "\n"))
	return status
}
