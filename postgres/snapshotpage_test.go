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

// Which of a page's queues are dead-letter queues is read through the
// partial index queues_dlq_target (WHERE dlq_target <> ”), not by a scan
// of every queue: for a page of 101 queues (GET /tidemq/queues' default
// page and the one past it) and of 1,000 (Visit's), and in the generic
// plan a prepared statement switches to after five runs. PostgreSQL
// proves = ANY($1) within the index's predicate only for a constant
// array of 100 elements at most, so the statement says dlq_target <> ”
// itself. (enable_seqscan off: a plan that could use the index does.)
func TestPageDeadLetterTargetsReadTheIndex(t *testing.T) {
	dsn, _ := pgtest.Schema(t)
	b := open(t, dsn, clocktest.New(time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)))
	defer b.Close()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	prepared := 0
	explain := func(setting string, arns []string) string {
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		for _, s := range []string{"SET LOCAL enable_seqscan = off", "SET LOCAL plan_cache_mode = " + setting} {
			if _, err := tx.Exec(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		prepared++
		name := fmt.Sprintf("page_dlq_targets_%d", prepared)
		if _, err := tx.Exec(ctx, "PREPARE "+name+"(text[]) AS "+postgres.PageDeadLetterTargetsSQL); err != nil {
			t.Fatal(err)
		}
		rows, err := tx.Query(ctx, "EXPLAIN EXECUTE "+name+"('{"+strings.Join(arns, ",")+"}')")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var plan []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			if len(line) > 120 {
				line = line[:120] + "..." // the array of ARNs
			}
			plan = append(plan, line)
		}
		return strings.Join(plan, "\n")
	}
	for _, n := range []int{10, 101, 1000} {
		arns := make([]string, n)
		for i := range arns {
			arns[i] = fmt.Sprintf("arn:aws:sqs:us-east-1:000000000000:q%04d", i)
		}
		for _, setting := range []string{"force_custom_plan", "force_generic_plan"} {
			if p := explain(setting, arns); !strings.Contains(p, "queues_dlq_target") {
				t.Errorf("%d ARNs, %s: the statement does not read queues_dlq_target:\n%s", n, setting, p)
			}
		}
	}
}
