package lambdart

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// The Runtime API, version 2018-06-01, as Lambda serves it to a runtime.
const (
	apiPrefix = "/2018-06-01/runtime"

	headerRequestID   = "Lambda-Runtime-Aws-Request-Id"
	headerDeadline    = "Lambda-Runtime-Deadline-Ms"
	headerFunctionARN = "Lambda-Runtime-Invoked-Function-Arn"
	headerTraceID     = "Lambda-Runtime-Trace-Id"
	headerErrorType   = "Lambda-Runtime-Function-Error-Type"
	// trailerErrorBody carries, base64-encoded, an error a runtime met
	// while it streamed a response (aws-lambda-go sends it).
	trailerErrorBody = "Lambda-Runtime-Function-Error-Body"
)

// MaxResponse is Lambda's limit on a synchronous response, in bytes.
const MaxResponse = 6 << 20

// maxErrorBody bounds an error report read from a runtime.
const maxErrorBody = 1 << 20

// routes is a process's Runtime API.
func (p *process) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+apiPrefix+"/invocation/next", p.next)
	mux.HandleFunc("POST "+apiPrefix+"/invocation/{id}/response", p.response)
	mux.HandleFunc("POST "+apiPrefix+"/invocation/{id}/error", p.invocationError)
	mux.HandleFunc("POST "+apiPrefix+"/init/error", p.initError)
	return mux
}

// next hands the runtime the next invocation, blocking until there is one.
func (p *process) next(w http.ResponseWriter, r *http.Request) {
	var inv *invocation
	select {
	case inv = <-p.offer:
	case <-r.Context().Done():
		return
	case <-p.stopping:
		apiError(w, http.StatusInternalServerError, "Runtime.Stopping", "the function is shutting down")
		return
	}
	p.mu.Lock()
	p.current, p.started = inv, true
	p.mu.Unlock()
	h := w.Header()
	h.Set(headerRequestID, inv.id)
	h.Set(headerDeadline, strconv.FormatInt(inv.deadline.UnixMilli(), 10))
	h.Set(headerFunctionARN, p.f.ARN)
	h.Set(headerTraceID, inv.traceID)
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(inv.payload)
}

// response takes the result of an invocation.
func (p *process) response(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxResponse+1))
	if err != nil {
		apiError(w, http.StatusBadRequest, "InvalidRequest", "cannot read the response: "+err.Error())
		return
	}
	inv, ok := p.take(w, r.PathValue("id"))
	if !ok {
		return
	}
	switch {
	case len(body) > MaxResponse:
		msg := fmt.Sprintf("Response payload size exceeded maximum allowed payload size (%d bytes).", MaxResponse)
		inv.answer(nil, &FunctionError{Type: "Function.ResponseSizeTooLarge", Message: msg})
		apiError(w, http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", msg)
		return
	case r.Trailer.Get(headerErrorType) != "":
		inv.answer(nil, parseError(r.Trailer.Get(headerErrorType), decodeTrailer(r.Trailer.Get(trailerErrorBody))))
	default:
		inv.answer(body, nil)
	}
	accepted(w)
}

// invocationError takes an error the function returned or raised.
func (p *process) invocationError(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxErrorBody))
	if err != nil {
		apiError(w, http.StatusBadRequest, "InvalidRequest", "cannot read the error: "+err.Error())
		return
	}
	inv, ok := p.take(w, r.PathValue("id"))
	if !ok {
		return
	}
	inv.answer(nil, parseError(r.Header.Get(headerErrorType), body))
	accepted(w)
}

// initError takes an error of the runtime's start-up; the runtime exits
// after it, or is killed.
func (p *process) initError(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxErrorBody))
	if err != nil {
		apiError(w, http.StatusBadRequest, "InvalidRequest", "cannot read the error: "+err.Error())
		return
	}
	fe := parseError(r.Header.Get(headerErrorType), body)
	fe.Init = true
	p.mu.Lock()
	if p.started {
		p.mu.Unlock()
		apiError(w, http.StatusForbidden, "InvalidStateTransition", "the runtime reported an init error after it asked for an invocation")
		return
	}
	first := p.initErr == nil
	if first {
		p.initErr = fe
	}
	p.mu.Unlock()
	if first {
		close(p.initFailed)
	}
	accepted(w)
}

// take removes the invocation id from the process: it is answered. A
// request for another id is refused, as Lambda refuses it.
func (p *process) take(w http.ResponseWriter, id string) (*invocation, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	inv := p.current
	if inv == nil || inv.id != id {
		apiError(w, http.StatusBadRequest, "InvalidRequestID", fmt.Sprintf("no invocation %q is waiting for an answer", id))
		return nil, false
	}
	p.current = nil
	return inv, true
}

// parseError reads an error report: Lambda's JSON shape, or, from a
// runtime that sends something else, its text as the message.
func parseError(typ string, body []byte) *FunctionError {
	var fe FunctionError
	if err := json.Unmarshal(body, &fe); err != nil || (fe.Type == "" && fe.Message == "") {
		fe = FunctionError{Message: excerpt(body)}
	}
	if fe.Type == "" {
		fe.Type = typ
	}
	if fe.Type == "" {
		fe.Type = "Unhandled"
	}
	return &fe
}

func decodeTrailer(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return []byte(s)
	}
	return b
}

func accepted(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	io.WriteString(w, `{"status":"OK"}`)
}

func apiError(w http.ResponseWriter, status int, typ, msg string) {
	b, _ := json.Marshal(map[string]string{"errorMessage": msg, "errorType": typ})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

func excerpt(b []byte) string {
	s := string(b)
	if len(s) > 512 {
		s = s[:512] + "…"
	}
	return s
}
