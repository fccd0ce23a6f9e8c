package trigger_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/internal/testlog"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/trigger"
)

// legacyFixture is the triggers.json that the release before the one store
// wrote (see gen.go there): orders-fn, an HTTP trigger whose target holds
// secrets in two headers and in its URL's userinfo, with most settings
// given; audit-fn and audit-cmd, disabled. Their host is fn.invalid.
const legacyFixture = "testdata/legacy/triggers.json"

// legacySecrets are the secrets in the fixture.
var legacySecrets = []string{"pw-legacy", "tok-legacy", "key-legacy", "audit-legacy"}

// legacyFile writes the fixture, with fn.invalid replaced by host when it
// is not "", as DATA_DIR/triggers.json of a new data directory, readable
// by others (as a backup might be restored), and returns its path and
// what it holds.
func legacyFile(t *testing.T, host string) (string, []byte) {
	t.Helper()
	b, err := os.ReadFile(legacyFixture)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		b = []byte(strings.ReplaceAll(string(b), "fn.invalid", host))
	}
	path := filepath.Join(t.TempDir(), trigger.LegacyFile)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil { // whatever the umask
		t.Fatal(err)
	}
	return path, b
}

// legacyTriggers decodes a triggers.json.
func legacyTriggers(t *testing.T, b []byte) []*trigger.Config {
	t.Helper()
	var f struct{ Triggers []*trigger.Config }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Triggers
}

// An older release's triggers.json is imported whole, secrets included,
// and renamed, readable by the server's user only; the next start imports
// nothing, and a triggers.json found again later (restored from a backup)
// is moved aside unread.
func TestImportFile(t *testing.T) {
	path, data := legacyFile(t, "")
	st := mem.New()
	logs := &testlog.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	if err := trigger.ImportFile(st, path, log); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("%s is still there: %v", path, err)
	}
	moved := path + ".imported"
	if b, err := os.ReadFile(moved); err != nil || string(b) != string(data) {
		t.Errorf("%s: %v", moved, err)
	}
	if fi, err := os.Stat(moved); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s holds secrets and is %v (%v), want 0600", moved, fi.Mode().Perm(), err)
	}
	got, err := trigger.StoredTriggers(st)
	if err != nil {
		t.Fatal(err)
	}
	if want := legacyTriggers(t, data); !reflect.DeepEqual(got, want) {
		t.Errorf("stored after the import:\n%s\nwant\n%s", marshal(t, got), marshal(t, want))
	}
	if !strings.Contains(logs.String(), "imported the triggers of an older release") || !strings.Contains(logs.String(), "triggers=3") {
		t.Errorf("the import is not logged:\n%s", logs)
	}
	noSecret(t, "the log", []byte(logs.String()), legacySecrets...)

	// The next start finds nothing to import.
	if err := trigger.ImportFile(st, path, log); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".imported-2"); !os.IsNotExist(err) {
		t.Errorf("a second import: %v", err)
	}

	// A file found again is not read: its trigger is not imported, and a
	// trigger deleted since the import does not come back.
	if err := os.WriteFile(path, []byte(`{"Triggers":[{"Name":"extra","Queue":"q","Target":{"URL":"http://h/"}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	logs = &testlog.Buffer{}
	log = slog.New(slog.NewTextHandler(logs, nil))
	if err := trigger.ImportFile(st, path, log); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".imported-2"); err != nil {
		t.Errorf("the file found again was not moved aside: %v", err)
	}
	if got2, _ := trigger.StoredTriggers(st); !reflect.DeepEqual(got2, got) {
		t.Errorf("the file found again changed the store: %s", marshal(t, got2))
	}
	if !strings.Contains(logs.String(), "imported into the store before") {
		t.Errorf("the file found again is not logged:\n%s", logs)
	}
}

// A trigger the store has already is not replaced by the file's.
func TestImportFileKeepsWhatTheStoreHas(t *testing.T) {
	path, data := legacyFile(t, "")
	st := mem.New()
	mine := &trigger.Config{Name: "orders-fn", Queue: "orders", Target: trigger.Target{URL: "http://mine/"}}
	if err := trigger.StoreTrigger(st, mine); err != nil {
		t.Fatal(err)
	}
	logs := &testlog.Buffer{}
	if err := trigger.ImportFile(st, path, slog.New(slog.NewTextHandler(logs, nil))); err != nil {
		t.Fatal(err)
	}
	got, err := trigger.StoredTriggers(st)
	if err != nil {
		t.Fatal(err)
	}
	want := legacyTriggers(t, data) // by name: audit-cmd, audit-fn, orders-fn
	want[2] = mine
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stored:\n%s\nwant\n%s", marshal(t, got), marshal(t, want))
	}
	if !strings.Contains(logs.String(), "not imported") || !strings.Contains(logs.String(), "orders-fn") {
		t.Errorf("the trigger left out is not logged:\n%s", logs)
	}
}

// A file that cannot be read as triggers stops the import, and the start:
// nothing is imported, the file stays where it is, and once it is mended
// the next start imports it.
func TestImportFileRefusesABadFile(t *testing.T) {
	path, data := legacyFile(t, "")
	if err := os.WriteFile(path, []byte(`{"Triggers":[{"Name":`), 0o600); err != nil {
		t.Fatal(err)
	}
	st := mem.New()
	quiet := slog.New(slog.DiscardHandler)
	if err := trigger.ImportFile(st, path, quiet); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("ImportFile of a bad file: %v", err)
	}
	if st.Len() != 0 {
		t.Errorf("a failed import wrote %d keys", st.Len())
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := trigger.ImportFile(st, path, quiet); err != nil {
		t.Fatal(err)
	}
	if got, _ := trigger.StoredTriggers(st); len(got) != 3 {
		t.Errorf("stored after the mended file: %s", marshal(t, got))
	}
}

// A data directory without a triggers.json has nothing to import.
func TestImportFileWithoutAFile(t *testing.T) {
	st := mem.New()
	if err := trigger.ImportFile(st, filepath.Join(t.TempDir(), trigger.LegacyFile), slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if st.Len() != 0 {
		t.Errorf("%d keys written", st.Len())
	}
}

// The imported triggers run as the older release ran them: orders-fn
// delivers with the secrets of its target, the disabled ones stay
// disabled.
func TestImportedTriggersRun(t *testing.T) {
	got := make(chan *http.Request, 10)
	fn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r
		w.Write([]byte(`{"batchItemFailures":[]}`))
	}))
	defer fn.Close()
	path, _ := legacyFile(t, strings.TrimPrefix(fn.URL, "http://"))
	st := mem.New()
	quiet := slog.New(slog.DiscardHandler)
	if err := trigger.ImportFile(st, path, quiet); err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	e, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, q := range []string{"orders", "audit"} {
		if _, err := e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: q, Attributes: map[string]string{"VisibilityTimeout": "120"}}); err != nil {
			t.Fatal(err)
		}
	}
	m, err := trigger.NewManager(trigger.Options{Broker: e, Store: st, WaitTimeSeconds: -1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	defer m.Close(ctx)
	var states []string
	for _, s := range m.List() {
		states = append(states, s.Name+" "+s.State)
	}
	if want := []string{"audit-cmd Disabled", "audit-fn Disabled", "orders-fn Enabled"}; !reflect.DeepEqual(states, want) {
		t.Errorf("triggers: %q, want %q", states, want)
	}
	if _, err := e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "orders", Entries: []tidemq.SendEntry{{Body: `{"kind":"order"}`}}}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		// The Authorization header wins over the URL's userinfo, as it did.
		if r.URL.Path != "/orders" || r.Header.Get("X-Api-Key") != "key-legacy" || r.Header.Get("Authorization") != "Bearer tok-legacy" {
			t.Errorf("the target got %s with X-Api-Key %q, Authorization %q", r.URL.Path, r.Header.Get("X-Api-Key"), r.Header.Get("Authorization"))
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the imported trigger did not invoke its target")
	}
}
