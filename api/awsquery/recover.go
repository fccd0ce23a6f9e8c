package awsquery

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
)

// Failer is a request in a transport's hands, as Recover needs it.
type Failer interface {
	// Fail answers the request with the transport's internal error, in
	// the request's protocol, and returns what the log line says about
	// the request (its action, request id, ...).
	Fail(w http.ResponseWriter) []any
}

// Recover is the one recover-and-log of the transports (SQS and SNS):
// deferred in a ServeHTTP, it turns a panic of the request into a logged
// error (the panic's value and stack, with what req tells) and an
// InternalFailure-like answer written by req, so that a bug in one action
// answers that request with an error of its protocol instead of dropping
// the connection; the server goes on. It must be called by defer itself
// (recover works only there):
//
//	defer awsquery.Recover(h.log, "sqs", w, c)
func Recover(log *slog.Logger, transport string, w http.ResponseWriter, req Failer) {
	v := recover()
	if v == nil {
		return
	}
	attrs := req.Fail(w)
	log.Error(transport+": panic while serving a request", append(attrs, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))...)
}
