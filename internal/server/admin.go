package server

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/alarms"
	"github.com/tidemq/tidemq/api/adminjson"
)

// Queues answers GET /tidemq/queues: the queues' snapshots as JSON, a
// page at a time (?limit=, default tidemq.SnapshotPageSize, at most
// tidemq.MaxSnapshotPageSize; ?nextToken= from the previous page's
// nextToken), so that 100,000 queues are not one 40 MB answer.
func Queues(snapshots func() []tidemq.QueueSnapshot) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		limit := tidemq.SnapshotPageSize
		if v := r.URL.Query().Get("limit"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > tidemq.MaxSnapshotPageSize {
				adminjson.WriteError(w, tidemq.Errorf(tidemq.ErrInvalidParameterValue, "limit must be 1 to %d", tidemq.MaxSnapshotPageSize))
				return
			}
			limit = n
		}
		page, next, err := tidemq.PageSnapshots(snapshots(), limit, r.URL.Query().Get("nextToken"))
		if err != nil {
			adminjson.WriteError(w, tidemq.Errorf(tidemq.ErrInvalidParameterValue, "invalid nextToken"))
			return
		}
		out := map[string]any{"queues": page}
		if next != "" {
			out["nextToken"] = next
		}
		_ = json.NewEncoder(w).Encode(out)
	})
}

// Alarms answers GET /tidemq/alarms from ev, or 404 when the alarms are
// off (ev is nil).
func Alarms(ev *alarms.Evaluator) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ev == nil {
			adminjson.WriteError(w, tidemq.Errorf(tidemq.ErrAlarmsOff, "alarms are off (--no-alarms)"))
			return
		}
		ev.Handler().ServeHTTP(w, r)
	})
}
