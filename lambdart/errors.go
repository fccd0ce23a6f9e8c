package lambdart

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// FunctionError is an error in Lambda's shape: one a runtime reported
// (for an invocation, or for its initialisation), or one Lambda itself
// gives about a runtime (Runtime.ExitError, Function.ResponseSizeTooLarge).
// StackTrace is kept as the runtime sent it: a list of strings from
// Python, of frames from Go.
type FunctionError struct {
	Message    string          `json:"errorMessage"`
	Type       string          `json:"errorType"`
	StackTrace json.RawMessage `json:"stackTrace,omitempty"`
	// Init is true for an error of the runtime's initialisation.
	Init bool `json:"-"`
}

func (e *FunctionError) Error() string {
	s := e.Type
	if s == "" {
		s = "Unhandled"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Init {
		s = "init error: " + s
	}
	return s
}

// TimeoutError is an invocation whose deadline passed. It unwraps to
// context.DeadlineExceeded.
type TimeoutError struct{ After time.Duration }

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("Task timed out after %.2f seconds", e.After.Seconds())
}

func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }
