package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/trigger"
)

// startShared opens the data directory's one store as serve does, the
// engine on one share and the triggers on another.
func startShared(t *testing.T, o *serveOptions) (*engine.Engine, *triggers) {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	shared := storage.Share(openPebble(t, o.dataDir))
	eng, err := engine.Open(engine.Options{Store: shared, SweepInterval: -1, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	trg, err := startTriggers(eng, shared.Share(), nil, o, "", log)
	if err != nil {
		eng.Close()
		t.Fatal(err)
	}
	return eng, trg
}

// stopShared stops both, which closes the store.
func stopShared(t *testing.T, eng *engine.Engine, trg *triggers) {
	t.Helper()
	trg.stop(10 * time.Second)
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
}

// serve keeps the triggers in the data directory's one store: a trigger
// created is there at the next start, and no triggers.json is written.
// The triggers.json of an older release (trigger/testdata/legacy) is
// imported at the first start, once, and renamed.
func TestStartTriggersKeepsThemInTheStore(t *testing.T) {
	ctx := context.Background()
	o := &serveOptions{dataDir: t.TempDir(), listen: "127.0.0.1:9324", region: "us-east-1", accountID: "000000000000"}
	fixture, err := os.ReadFile(filepath.Join("..", "..", "trigger", "testdata", "legacy", "triggers.json"))
	if err != nil {
		t.Fatal(err)
	}
	old := legacyTriggersFile(o)
	if err := os.WriteFile(old, fixture, 0o600); err != nil {
		t.Fatal(err)
	}

	eng, trg := startShared(t, o)
	if l := trg.m.List(); len(l) != 3 {
		t.Fatalf("after the import: %+v", l)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", old, err)
	}
	if b, err := os.ReadFile(old + ".imported"); err != nil || string(b) != string(fixture) {
		t.Errorf("%s.imported: %v", old, err)
	}
	if _, err := eng.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q", Attributes: map[string]string{"VisibilityTimeout": "120"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := trg.m.Create(ctx, trigger.Config{Name: "new", Queue: "q", Timeout: 1, Enabled: new(false),
		Target: trigger.Target{URL: "http://h/", Headers: map[string]string{"Authorization": "Bearer s"}}}); err != nil {
		t.Fatal(err)
	}
	if err := trg.m.Delete("audit-cmd"); err != nil {
		t.Fatal(err)
	}
	stopShared(t, eng, trg)
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("a triggers.json was written: %v", err)
	}

	eng, trg = startShared(t, o)
	defer stopShared(t, eng, trg)
	var names []string
	for _, s := range trg.m.List() {
		names = append(names, s.Name)
	}
	if len(names) != 3 || names[0] != "audit-fn" || names[1] != "new" || names[2] != "orders-fn" {
		t.Errorf("at the next start: %q", names)
	}
	if _, err := os.Stat(old + ".imported-2"); !os.IsNotExist(err) {
		t.Errorf("a second import: %v", err)
	}
}

// With --in-memory no file of the data directory is read or written.
func TestStartTriggersInMemory(t *testing.T) {
	dir := t.TempDir()
	o := &serveOptions{dataDir: dir, inMemory: true}
	if err := os.WriteFile(filepath.Join(dir, trigger.LegacyFile), []byte(`{"Triggers":[{"Name":"t","Queue":"q","Target":{"URL":"http://h/"}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	trg, err := startTriggers(eng, mem.New(), nil, o, "", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer trg.stop(time.Second)
	if l := trg.m.List(); len(l) != 0 {
		t.Errorf("in memory, triggers %+v", l)
	}
	if _, err := os.Stat(filepath.Join(dir, trigger.LegacyFile)); err != nil {
		t.Errorf("in memory, the data directory's triggers.json was touched: %v", err)
	}
}

// serve registers the triggers' metrics: the state of each trigger among
// them.
func TestStartTriggersRegistersMetrics(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	eng, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if _, err := eng.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q", Attributes: map[string]string{"VisibilityTimeout": "120"}}); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	trg, err := startTriggers(eng, mem.New(), reg, &serveOptions{inMemory: true}, "", log)
	if err != nil {
		t.Fatal(err)
	}
	defer trg.stop(time.Second)
	if _, err := trg.m.Create(ctx, trigger.Config{Name: "off", Queue: "q", Enabled: new(false), Target: trigger.Target{URL: "http://h/"}}); err != nil {
		t.Fatal(err)
	}
	want := `
# HELP tidemq_trigger_state 1 for the state the trigger is in (Enabled, Disabled, Paused: its queue's visibility timeout is too short, Failing: it cannot poll), 0 for the others.
# TYPE tidemq_trigger_state gauge
tidemq_trigger_state{queue="q",state="Disabled",trigger="off"} 1
tidemq_trigger_state{queue="q",state="Enabled",trigger="off"} 0
tidemq_trigger_state{queue="q",state="Failing",trigger="off"} 0
tidemq_trigger_state{queue="q",state="Paused",trigger="off"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "tidemq_trigger_state"); err != nil {
		t.Fatal(err)
	}
}
