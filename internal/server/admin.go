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
// nextToken), so that 100,000 queues are not one 40 MB answer. A page
// costs what its queues cost when s is a tidemq.SnapshotPager (the engine,
// PostgreSQL): only the page's queues are snapshotted.
func Queues(s tidemq.Snapshotter) http.Handler {
	return VisibleQueues(s, nil)
}

// VisibleQueues is Queues listing only the queues visible says the caller
// of r may see (by ARN; under --auth with permissions, those whose
// attributes it may read), filtered before paging so that a page is a page
// of what the caller sees. nil visible lists every queue.
func VisibleQueues(s tidemq.Snapshotter, visible func(r *http.Request, queueARN string) bool) http.Handler {
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
		after, err := tidemq.PageAfter(r.URL.Query().Get("nextToken"))
		if err != nil {
			adminjson.WriteError(w, tidemq.Errorf(tidemq.ErrInvalidParameterValue, "invalid nextToken"))
			return
		}
		page, next, err := pageVisible(s, limit, after, func(arn string) bool {
			return visible == nil || visible(r, arn)
		})
		if err != nil {
			adminjson.WriteError(w, err)
			return
		}
		out := map[string]any{"queues": page}
		if next != "" {
			out["nextToken"] = next
		}
		_ = json.NewEncoder(w).Encode(out)
	})
}

// pageVisible is the page of at most limit visible queues after the name
// after, and the token of the next page ("" after the last). It asks s for
// limit+1 queues, from after on, then for twice as many each time while
// the page is not full (up to tidemq.MaxSnapshotPageSize): a caller who
// sees few of many queues costs a few of the store's pages, not one per
// limit+1 queues (each a walk of every queue under the engine's lock, or
// a transaction). It decides only as many queues as the page needs (until
// one past the page), not every queue for every page.
func pageVisible(s tidemq.Snapshotter, limit int, after string, visible func(arn string) bool) ([]tidemq.QueueSnapshot, string, error) {
	page := make([]tidemq.QueueSnapshot, 0, limit)
	for n := limit + 1; ; n = max(limit+1, min(2*n, tidemq.MaxSnapshotPageSize)) {
		chunk, err := tidemq.SnapshotPage(s, after, n)
		if err != nil {
			return nil, "", err
		}
		for i := range chunk {
			if !visible(chunk[i].ARN) {
				continue
			}
			if len(page) == limit { // one more to show: the next page starts after this one
				return page, tidemq.PageToken(page[limit-1].Name), nil
			}
			page = append(page, chunk[i])
		}
		if len(chunk) < n { // no more queues follow
			return page, "", nil
		}
		after = chunk[len(chunk)-1].Name
	}
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
