package awsquery

import (
	"net/http"
	"strconv"

	"github.com/tidemq/tidemq"
)

// Service is one AWS service's dialect of the Query protocol: what its
// answers look like and how its parameters are checked. A Service is
// read-only once in use.
type Service struct {
	// Namespace is the xmlns of every response, e.g.
	// "http://queue.amazonaws.com/doc/2012-11-05/".
	Namespace string
	// ErrorDetail writes an empty <Detail/> after an error's <Message>, as
	// SQS does.
	ErrorDetail bool
	// KeepValue reports whether a parameter's value is left to the
	// domain's checks when it is not UTF-8: a message body, which the
	// domain refuses with an error of its own. Any other value that is not
	// UTF-8 fails the request. Nil keeps none.
	KeepValue func(name string) bool
	// InvalidParameter words the error for a parameter whose value the
	// parser refuses, as the service words an invalid parameter. Nil means
	// InvalidParameterValue, "Value for parameter <name> is invalid.
	// Reason: <reason>".
	InvalidParameter func(name, reason string) *tidemq.Error
	// MalformedForm words the error for a form that does not decode: a
	// bad escape or a ';' separator. source is FromBody or FromURL, cause
	// says what is wrong. Nil means MalformedInput, "<source> is not a
	// valid form: <cause>".
	MalformedForm func(source string, cause error) *tidemq.Error
}

// The sources of a request's parameters, as errors name them.
const (
	FromBody = "The request body"
	FromURL  = "The query string"
)

func (s *Service) malformedForm(source string, cause error) *tidemq.Error {
	if s.MalformedForm != nil {
		return s.MalformedForm(source, cause)
	}
	return tidemq.Errorf(tidemq.ErrMalformedInput, "%s is not a valid form: %v", source, cause)
}

func (s *Service) invalidParameter(name, reason string) *tidemq.Error {
	if s.InvalidParameter != nil {
		return s.InvalidParameter(name, reason)
	}
	return tidemq.Errorf(tidemq.ErrInvalidParameterValue, "Value for parameter %s is invalid. Reason: %s", name, reason)
}

const xmlProlog = `<?xml version="1.0"?>`

// WriteResult writes a successful response and returns its status:
// <ActionResponse><ActionResult>…</ActionResult><ResponseMetadata>
// <RequestId>…</RequestId></ResponseMetadata></ActionResponse>. An action
// without output has no Result element (result nil); an output with no
// members is the empty element <ActionResult/>.
func (s *Service) WriteResult(w http.ResponseWriter, action, requestID string, result *XMLWriter) int {
	var x XMLWriter
	x.b.WriteString(xmlProlog)
	x.b.WriteString("<" + action + `Response xmlns="` + s.Namespace + `">`)
	if result != nil {
		if result.Len() == 0 {
			x.b.WriteString("<" + action + "Result/>")
		} else {
			x.Open(action + "Result")
			x.Raw(result.Bytes())
			x.Close(action + "Result")
		}
	}
	x.Open("ResponseMetadata")
	x.Elem("RequestId", requestID)
	x.Close("ResponseMetadata")
	x.Close(action + "Response")
	return writeXML(w, requestID, http.StatusOK, x.Bytes())
}

// WriteError writes an error response and returns its status. RequestId is
// a sibling of Error, not inside ResponseMetadata.
func (s *Service) WriteError(w http.ResponseWriter, requestID string, e *tidemq.Error) int {
	var x XMLWriter
	x.b.WriteString(xmlProlog)
	x.b.WriteString(`<ErrorResponse xmlns="` + s.Namespace + `">`)
	x.Open("Error")
	x.Elem("Type", string(e.Code.Fault))
	x.Elem("Code", e.Code.Code)
	x.Elem("Message", e.Message)
	if s.ErrorDetail {
		x.b.WriteString("<Detail/>")
	}
	x.Close("Error")
	x.Elem("RequestId", requestID)
	x.Close("ErrorResponse")
	return writeXML(w, requestID, e.Code.Status, x.Bytes())
}

func writeXML(w http.ResponseWriter, requestID string, status int, body []byte) int {
	h := w.Header()
	h.Set("Content-Type", "text/xml")
	h.Set("X-Amzn-Requestid", requestID)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
	return status
}
