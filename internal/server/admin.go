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
	return VisibleQueues(snapshots, nil)
}

// VisibleQueues is Queues listing only the queues visible says the caller
// of r may see (by ARN; under --auth with permissions, those whose
// attributes it may read), filtered before paging so that a page is a page
// of what the caller sees. nil visible lists every queue.
func VisibleQueues(snapshots func() []tidemq.QueueSnapshot, visible func(r *http.Request, queueARN string) bool) http.Handler {
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
		page, next, err := pageVisible(snapshots(), limit, r.URL.Query().Get("nextToken"), func(arn string) bool {
			return visible == nil || visible(r, arn)
		})
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

// pageVisible is tidemq.PageSnapshots of the visible snapshots. It decides
// only as many queues as the page needs (from the token on, until one past
// the page), not every queue for every page.
func pageVisible(snaps []tidemq.QueueSnapshot, limit int, token string, visible func(arn string) bool) ([]tidemq.QueueSnapshot, string, error) {
	rest, _, err := tidemq.PageSnapshots(snaps, len(snaps)+1, token) // the queues after the token
	if err != nil {
		return nil, "", err
	}
	page := make([]tidemq.QueueSnapshot, 0, min(limit, len(rest)))
	for i := range rest {
		if !visible(rest[i].ARN) {
			continue
		}
		if len(page) == limit { // one more to show: the next page starts after this one
			_, next, err := tidemq.PageSnapshots(append(page, rest[i]), limit, "")
			return page, next, err
		}
		page = append(page, rest[i])
	}
	return page, "", nil
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
