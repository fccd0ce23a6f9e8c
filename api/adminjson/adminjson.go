// Package adminjson is how tidemq's own HTTP endpoints (the admin API under
// /tidemq/, the console's API, the trigger API, backups) answer an error:
// {"error": message, "code": code} with the HTTP status of the error's
// catalogue entry (tidemq's errors.go). Every admin route writes its
// errors here, so a client reads one shape everywhere (package
// adminclient reads it).
package adminjson

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/tidemq/tidemq"
)

// ErrorBody is the JSON of an admin error.
type ErrorBody struct {
	Error string `json:"error"`
	Code  string `json:"code,omitempty"`
}

// WriteError answers err: a *tidemq.Error with its catalogue status and
// code, anything else as InternalFailure with its text.
func WriteError(w http.ResponseWriter, err error) {
	var e *tidemq.Error
	if !errors.As(err, &e) || e.Code == nil {
		e = tidemq.Errorf(tidemq.ErrInternalFailure, "%v", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(e.Code.Status)
	_ = json.NewEncoder(w).Encode(ErrorBody{Error: e.Message, Code: e.Code.Code})
}
