package adminclient_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/adminclient"
	"github.com/tidemq/tidemq/alarms"
	"github.com/tidemq/tidemq/api/adminjson"
	"github.com/tidemq/tidemq/internal/server"
)

// Queues follows the pages of the server's own /tidemq/queues handler.
func TestQueuesPages(t *testing.T) {
	snaps := make([]tidemq.QueueSnapshot, 2*tidemq.MaxSnapshotPageSize+5)
	for i := range snaps {
		snaps[i].Name = fmt.Sprintf("q%06d", i)
		snaps[i].Visible = i
	}
	srv := httptest.NewServer(server.Queues(tidemq.SnapshotFunc(func() []tidemq.QueueSnapshot { return snaps })))
	defer srv.Close()
	got, err := adminclient.New(srv.URL, nil).Queues(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(snaps) || got[len(got)-1].Visible != len(snaps)-1 {
		t.Fatalf("%d queues, want %d", len(got), len(snaps))
	}
}

// Alarms follows the pages of the server's own /tidemq/alarms handler.
func TestAlarmsPages(t *testing.T) {
	snaps := make([]tidemq.QueueSnapshot, alarms.MaxPageSize/2+10)
	for i := range snaps {
		snaps[i] = tidemq.QueueSnapshot{Name: fmt.Sprintf("q%06d", i), RetentionSeconds: 345600}
	}
	for _, i := range []int{7, 4000, 5001} { // three dead-letter queues not empty: firing
		snaps[i].IsDeadLetterQueue, snaps[i].Visible = true, 1
	}
	ev := alarms.New(alarms.Options{Snapshots: func() []tidemq.QueueSnapshot { return snaps }})
	ev.Evaluate()
	want := ev.Alarms()
	if len(want) <= 2*alarms.MaxPageSize {
		t.Fatalf("%d alarms: fewer than three pages", len(want))
	}
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		server.Alarms(ev).ServeHTTP(w, r)
	}))
	defer srv.Close()
	c := adminclient.New(srv.URL, nil)
	got, err := c.Alarms(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Alarms) != len(want) || got.Alarms[len(want)-1].Queue != want[len(want)-1].Queue {
		t.Fatalf("%d alarms, want %d", len(got.Alarms), len(want))
	}
	// The firing ones come first: reading them takes one page.
	requests = 0
	firing, err := c.FiringAlarms(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(firing.Alarms) != 3 || firing.Alarms[0].State != alarms.StateFiring || requests != 1 {
		t.Fatalf("%d firing alarms in %d requests, want 3 in 1", len(firing.Alarms), requests)
	}
}

// Errors carry the catalogue's code and message as the admin routes write
// them; a 404 in that shape is "no such thing", a 404 in another is not.
func TestErrors(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/tidemq/triggers/nope", func(w http.ResponseWriter, r *http.Request) {
		adminjson.WriteError(w, tidemq.Errorf(tidemq.ErrTriggerNotFound, `no trigger named "nope"`))
	})
	mux.HandleFunc("/tidemq/backup", func(w http.ResponseWriter, r *http.Request) {
		adminjson.WriteError(w, tidemq.Errorf(tidemq.ErrBackupInProgress, "another backup is running"))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := adminclient.New(srv.URL, nil)
	if s, err := c.Trigger(context.Background(), "nope"); s != nil || err != nil {
		t.Errorf("missing trigger: %v, %v", s, err)
	}
	if _, err := c.Trigger(context.Background(), "other"); err == nil || adminclient.IsNotFound(err) {
		t.Errorf("a 404 that is not the admin shape: %v", err)
	}
	_, err := c.Backup(context.Background(), "x")
	e, ok := err.(*adminclient.Error)
	if !ok || e.Status != 409 || e.Code != "BackupInProgress" || e.Error() != "another backup is running" {
		t.Errorf("backup: %#v", err)
	}
}
