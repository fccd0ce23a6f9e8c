//go:build ignore

// gen writes DATA_DIR/triggers.json as the release before the one store
// wrote it (commit 9c1c709), through the admin API's Manager: an HTTP
// trigger whose target holds secrets (two headers and the URL's
// userinfo) with most settings given, a disabled one on another queue,
// and a command trigger. The targets' host is fn.invalid: tests put their
// own endpoint in its place.
//
// It builds against that commit only (trigger.Options.Path is gone
// since): run it from a checkout of 9c1c709 as
//
//	go run ./trigger/testdata/legacy/gen.go OUTDIR
package main

import (
	"context"
	"log"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/trigger"
)

func main() {
	out := os.Args[1]
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	eng, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1, Logger: quiet})
	check(err)
	for _, q := range []string{"orders", "audit"} {
		_, err := eng.CreateQueue(ctx, tidemq.CreateQueueParams{Name: q, Attributes: map[string]string{"VisibilityTimeout": "120"}})
		check(err)
	}
	check(os.MkdirAll(out, 0o755))
	m, err := trigger.NewManager(trigger.Options{Broker: eng, Path: filepath.Join(out, "triggers.json"), AllowCommands: true, Logger: quiet})
	check(err)
	off := false
	for _, c := range []trigger.Config{
		{
			Name: "orders-fn", Queue: "orders", BatchSize: 5, Timeout: 2, MaximumBatchingWindowInSeconds: 1,
			FunctionResponseTypes: []string{trigger.ReportBatchItemFailures},
			ScalingConfig:         &trigger.ScalingConfig{MaximumConcurrency: 3},
			FilterCriteria:        &trigger.FilterCriteria{Filters: []trigger.Filter{{Pattern: `{"body":{"kind":["order"]}}`}}},
			Target: trigger.Target{URL: "http://svc:pw-legacy@fn.invalid/orders",
				Headers: map[string]string{"Authorization": "Bearer tok-legacy", "X-Api-Key": "key-legacy"}},
		},
		{
			Name: "audit-fn", Queue: "audit", Enabled: &off, Timeout: 5,
			Target: trigger.Target{URL: "http://fn.invalid/audit", Headers: map[string]string{"X-Audit-Token": "audit-legacy"}},
		},
		{
			Name: "audit-cmd", Queue: "audit", Enabled: &off,
			Target: trigger.Target{Command: []string{"/bin/cat"}, Dir: "/tmp"},
		},
	} {
		_, err := m.Create(ctx, c)
		check(err)
	}
	check(m.Close(ctx))
	check(eng.Close())
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
