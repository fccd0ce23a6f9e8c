package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/tidemq/tidemq"
)

type fixedSnapshots []tidemq.QueueSnapshot

func (f fixedSnapshots) Snapshot() []tidemq.QueueSnapshot { return f }

// GET /tidemq/queues answers a page at a time, 1,000 queues by default.
func TestQueuesRoutePages(t *testing.T) {
	snaps := make(fixedSnapshots, 2500)
	for i := range snaps {
		snaps[i].Name = fmt.Sprintf("q%05d", i)
	}
	h := Queues(snaps.Snapshot)
	get := func(query string) (int, []tidemq.QueueSnapshot, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/tidemq/queues"+query, nil))
		var out struct {
			Queues    []tidemq.QueueSnapshot
			NextToken string
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &out)
		return rec.Code, out.Queues, out.NextToken
	}
	code, qs, next := get("")
	if code != http.StatusOK || len(qs) != tidemq.SnapshotPageSize || next == "" {
		t.Fatalf("first page: %d, %d queues, next %q", code, len(qs), next)
	}
	total := len(qs)
	for next != "" {
		var page []tidemq.QueueSnapshot
		code, page, next = get("?limit=700&nextToken=" + url.QueryEscape(next))
		if code != http.StatusOK {
			t.Fatalf("status %d", code)
		}
		total += len(page)
	}
	if total != 2500 {
		t.Errorf("%d queues over the pages, want 2500", total)
	}
	for _, bad := range []string{"?limit=0", "?limit=10001", "?limit=x", "?nextToken=%25%25"} {
		if code, _, _ := get(bad); code != http.StatusBadRequest {
			t.Errorf("GET /tidemq/queues%s: %d, want 400", bad, code)
		}
	}
}
