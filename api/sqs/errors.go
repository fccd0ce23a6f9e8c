package sqs

import (
	"errors"
	"net/http"

	"github.com/tidemq/tidemq"
)

// queryQueueDoesNotExist is how the Query protocol words the default
// QueueDoesNotExist message (JSON says "The specified queue does not exist.").
const queryQueueDoesNotExist = "The specified queue does not exist for this wsdl version."

// errBareUnknownOperation is a GET on a queue URL without an Action (see
// writeError): a 404 whose body is <UnknownOperationException/>.
var errBareUnknownOperation = tidemq.UnknownOperation()

// writeError answers with err in the request's protocol and returns the
// HTTP status. An error that is not a *tidemq.Error is logged and answered
// as InternalFailure: its text may say things a client should not see.
func (c *call) writeError(w http.ResponseWriter, err error) int {
	if err == errBareUnknownOperation {
		// AWS answers a GET on a queue URL without an Action with a bare
		// element, in XML whatever the client asked for.
		c.setCommonHeaders(w, "text/xml")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("<UnknownOperationException/>"))
		return http.StatusNotFound
	}
	var e *tidemq.Error
	switch {
	case errors.As(err, &e) && e.Code != nil:
	case c.r.Context().Err() != nil:
		// The client went away (often during a long poll): nobody will
		// read the answer, and it is not a server fault worth an error log.
		c.h.log.Debug("sqs: request abandoned by the client", "action", c.action, "request_id", c.requestID, "err", err)
		e = tidemq.InternalFailure()
	default:
		c.h.log.Error("sqs: internal error", "action", c.action, "request_id", c.requestID, "err", err)
		e = tidemq.InternalFailure()
	}
	if c.proto == protoJSON {
		return c.writeJSONError(w, e)
	}
	if c.queryJSON {
		return c.writeQueryJSONError(w, e)
	}
	return c.writeXMLError(w, e)
}

// queryMessage returns an error's message as the Query protocol words it.
func queryMessage(e *tidemq.Error) string {
	if e.Code == tidemq.ErrQueueDoesNotExist && e.Message == tidemq.MsgQueueDoesNotExist.Text {
		return queryQueueDoesNotExist
	}
	return e.Message
}

// setCommonHeaders sets the headers every response carries.
func (c *call) setCommonHeaders(w http.ResponseWriter, contentType string) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("X-Amzn-Requestid", c.requestID)
}
