package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/internal/pgtest"
	"github.com/tidemq/tidemq/internal/server"
	"github.com/tidemq/tidemq/postgres"
)

// GET /tidemq/queues over PostgreSQL pages in SQL: every page of 100 of
// 1,000 queues, in order, each read through the byte-order index of the
// queue names (a page of a scan and sort of every queue would not use it).
func TestQueuesPagesInSQL(t *testing.T) {
	dsn, _ := pgtest.Schema(t)
	b := open(t, dsn, clocktest.New(time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)))
	defer b.Close()
	ctx := context.Background()
	const n = 1000
	for i := range n {
		if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: fmt.Sprintf("q%04d", (i*7)%n)}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, `ANALYZE queues`); err != nil {
		t.Fatal(err)
	}
	var plan []string
	rows, err := c.Query(ctx, "EXPLAIN "+postgres.SnapshotPageSQL, "q0499", 101)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	rows.Close()
	if p := strings.Join(plan, "\n"); !strings.Contains(p, "queues_name_order") {
		t.Errorf("a page's statement does not read the name order index:\n%s", p)
	}

	h := server.Queues(b)
	var got []string
	next := ""
	for pages := 0; pages < n; pages++ {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/tidemq/queues?limit=100&nextToken="+url.QueryEscape(next), nil))
		var out struct {
			Queues    []tidemq.QueueSnapshot
			NextToken string
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || rec.Code != http.StatusOK {
			t.Fatalf("page %d: %d %s", pages, rec.Code, rec.Body)
		}
		if len(out.Queues) > 100 {
			t.Fatalf("page %d: %d queues, limit 100", pages, len(out.Queues))
		}
		for _, q := range out.Queues {
			got = append(got, q.Name)
		}
		if next = out.NextToken; next == "" {
			break
		}
	}
	if len(got) != n {
		t.Fatalf("%d queues over the pages, want %d", len(got), n)
	}
	for i, name := range got {
		if want := fmt.Sprintf("q%04d", i); name != want {
			t.Fatalf("queue %d is %s, want %s", i, name, want)
		}
	}
}

// A nextToken of GET /tidemq/queues that decodes to no queue name's bytes
// (a NUL, bytes that are not UTF-8: no page ever ended with such a name,
// and PostgreSQL's text cannot hold them) is an invalid token, 400
// InvalidParameterValue as a token that does not decode is, not the
// database's refusal of the bound as a 500 InternalFailure.
func TestQueuesPageTokenOfNoName(t *testing.T) {
	dsn, _ := pgtest.Schema(t)
	b := open(t, dsn, clocktest.New(time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)))
	defer b.Close()
	if _, err := b.CreateQueue(context.Background(), tidemq.CreateQueueParams{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	h := server.Queues(b)
	for _, last := range []string{"q\x00", "\x00", "q\xff", "\xc3"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/tidemq/queues?nextToken="+url.QueryEscape(tidemq.PageToken(last)), nil))
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"InvalidParameterValue"`) {
			t.Errorf("nextToken of %q: %d %s, want 400 InvalidParameterValue", last, rec.Code, strings.TrimSpace(rec.Body.String()))
		}
	}
}
