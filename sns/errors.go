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

// The rest of the catalogue: SNS's error codes as botocore models them
// (code, HTTP status, sender or receiver fault).

// ResourceNotFound is the tagging actions' error for a topic that does not
// exist (ResourceNotFoundException: 404, sender fault).
func ResourceNotFound(msg string) *Error {
	return Errorf("ResourceNotFound", http.StatusNotFound, "%s", msg)
}

// TagLimitExceeded is returned when a topic would have more than MaxTags
// tags (TagLimitExceededException: 400, sender fault).
func TagLimitExceeded() *Error {
	return Errorf("TagLimitExceeded", http.StatusBadRequest, "Could not complete request: tag quota of per resource exceeded")
}

// InternalError is a server fault (InternalErrorException: 500, receiver
// fault).
func InternalError(msg string) *Error {
	return &Error{Code: "InternalError", Status: http.StatusInternalServerError, Message: msg, Receiver: true}
}

// AuthorizationError is SNS's 403 for a request that lacks the
// authentication it needs (AuthorizationErrorException).
func AuthorizationError(msg string) *Error {
	return Errorf("AuthorizationError", http.StatusForbidden, "%s", msg)
}
