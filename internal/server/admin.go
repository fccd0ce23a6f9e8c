package server

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/alarms"
)

// Queues answers GET /tidemq/queues: every queue's snapshot, as JSON.
func Queues(snapshots func() []tidemq.QueueSnapshot) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"queues": snapshots()})
	})
}

// Alarms answers GET /tidemq/alarms from ev, or 404 when the alarms are
// off (ev is nil).
func Alarms(ev *alarms.Evaluator) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ev == nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintln(w, `{"error":"alarms are off (--no-alarms)"}`)
			return
		}
		ev.Handler().ServeHTTP(w, r)
	})
}
