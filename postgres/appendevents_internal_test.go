package postgres

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/tidemq/tidemq/internal/pgtest"
)

// TestAppendEventsKeepsTheFirstAndTheLatest checks tidemq_append_events,
// which every receive calls, against tidemq.AppendHistory's rule (the
// first event kept, the oldest after it dropped, at most bound events),
// as 0006 defined it in SQL and as 0015 defines it in PL/pgSQL: both must
// give the same arrays for every length up to the bound and every add.
func TestAppendEventsKeepsTheFirstAndTheLatest(t *testing.T) {
	ctx := context.Background()
	_, pool := pgtest.SchemaPool(t)
	// model appends add to events one at a time, as AppendHistory does.
	model := func(events []int, add []int, bound int) []int {
		out := slices.Clone(events)
		for _, a := range add {
			if len(out) >= bound {
				out = append(out[:1], out[2:]...)
			}
			out = append(out, a)
		}
		return out
	}
	check := func(schema string) {
		t.Helper()
		for _, bound := range []int{2, 3, 4, 32} {
			for k := -1; k <= bound; k++ { // -1: a NULL events column
				for n := 1; n <= 2; n++ {
					var events []int
					var ev []byte // nil: NULL
					if k >= 0 {
						events = make([]int, k)
						for i := range events {
							events[i] = i
						}
						ev, _ = json.Marshal(events)
					}
					add := make([]int, n)
					for i := range add {
						add[i] = 100 + i
					}
					ad, _ := json.Marshal(add)
					var got []int
					if err := pool.QueryRow(ctx, `SELECT tidemq_append_events($1::jsonb, $2::jsonb, $3)`, ev, ad, bound).Scan(&got); err != nil {
						t.Fatal(err)
					}
					want := model(events, add, bound)
					if k < 0 {
						want = add
					}
					if !slices.Equal(got, want) {
						t.Errorf("%s: tidemq_append_events(%s, %s, %d) = %v, want %v", schema, ev, ad, bound, got, want)
					}
				}
			}
		}
	}
	if err := migrateTo(ctx, pool, 14); err != nil {
		t.Fatal(err)
	}
	check("schema 14 (SQL)")
	// 0006's definition, kept under another name for the comparison below.
	var def string
	if err := pool.QueryRow(ctx, `SELECT pg_get_functiondef('tidemq_append_events'::regproc)`).Scan(&def); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, strings.Replace(def, "tidemq_append_events(", "old_append_events(", 1)); err != nil {
		t.Fatal(err)
	}
	if err := migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	// Beyond the rule: both definitions alike for NULL arguments, empty
	// arrays, histories longer than the bound and bounds below 2.
	var differ []string
	if err := pool.QueryRow(ctx, `SELECT coalesce(array_agg(format('(%s, %s, %s): %s, want %s', e, a, b, n, o)), '{}')
		FROM unnest(ARRAY[NULL, '[]', '[0]', '[0,1]', '[0,1,2]', '[0,1,2,3,4,5,6]']::jsonb[]) AS e,
			unnest(ARRAY[NULL, '[]', '[10]', '[10,11]', '[10,11,12,13,14]']::jsonb[]) AS a,
			unnest(ARRAY[NULL, -3, 0, 1, 2, 3, 5, 32]) AS b,
			LATERAL (SELECT tidemq_append_events(e, a, b) AS n, old_append_events(e, a, b) AS o) x
		WHERE n IS DISTINCT FROM o`).Scan(&differ); err != nil {
		t.Fatal(err)
	}
	for _, d := range differ {
		t.Errorf("tidemq_append_events%s (0006's definition)", d)
	}
	var lang string
	if err := pool.QueryRow(ctx, `SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
		WHERE p.proname = 'tidemq_append_events' AND p.pronamespace = current_schema()::regnamespace`).Scan(&lang); err != nil {
		t.Fatal(err)
	}
	if lang != "plpgsql" {
		t.Fatalf("after the migrations tidemq_append_events is in %s, want plpgsql (0015)", lang)
	}
	check("schema 15 (PL/pgSQL)")
}
