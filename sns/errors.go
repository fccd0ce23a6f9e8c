package sns

import (
	"errors"
	"fmt"
	"net/http"
)

// Error is an SNS error: its Query error code, HTTP status and message.
type Error struct {
	Code    string
	Status  int
	Message string
	// Receiver is true for server faults (the XML <Type> is then Receiver).
	Receiver bool
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf returns an *Error.
func Errorf(code string, status int, format string, args ...any) *Error {
	return &Error{Code: code, Status: status, Message: fmt.Sprintf(format, args...)}
}

// InvalidParameter is SNS's InvalidParameter error (400) in its usual shape.
func InvalidParameter(param, reason string) *Error {
	if reason == "" {
		return Errorf("InvalidParameter", http.StatusBadRequest, "Invalid parameter: %s", param)
	}
	return Errorf("InvalidParameter", http.StatusBadRequest, "Invalid parameter: %s Reason: %s", param, reason)
}

// NotFound is SNS's NotFound error (404).
func NotFound(msg string) *Error { return Errorf("NotFound", http.StatusNotFound, "%s", msg) }

// AsError returns err as an *Error, wrapping anything else as InternalError.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: "InternalError", Status: http.StatusInternalServerError, Message: "An internal error occurred.", Receiver: true}
}
