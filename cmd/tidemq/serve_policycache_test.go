package main

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
)

// With a policy cache long enough never to expire in the test, a grant and
// its removal through the server's broker (SetQueueAttributes,
// AddPermission, RemovePermission, DeleteQueue) still decide the next call:
// the broker bindQueues returns tells the cache of every change.
func TestPolicyCacheForgetsThisNodesChanges(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	creds := filepath.Join(t.TempDir(), "principals.yaml")
	if err := os.WriteFile(creds, []byte(`principals:
  - name: team-b
    account: "222222222222"
    keys: ["AKIDB:secret-b"]
    policy: {Statement: [{Effect: Allow, Action: "sqs:SendMessage", Resource: "*"}]}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	o := &serveOptions{auth: true, credentialsFile: creds, inMemory: true, region: "us-east-1", accountID: "000000000000"}
	o.access.policyTTL = time.Hour
	if _, err := o.openAccess(ctx, log); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.access.close)
	o.access.authorizer.Clock = clocktest.New(time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC))
	eng, err := engine.Open(engine.Options{Store: mem.New(), Region: "us-east-1", AccountID: "000000000000", SweepInterval: -1, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	b := o.access.bindQueues(eng, "us-east-1")
	if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "a-in"}); err != nil {
		t.Fatal(err)
	}
	arn := tidemq.QueueARN("us-east-1", "000000000000", "a-in")
	r := httptest.NewRequest("POST", "/", nil)
	may := func() bool { return o.access.authorizer.Allowed(r, "AKIDB", "sqs:SendMessage", arn) }
	grant := `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"222222222222"},"Action":"sqs:SendMessage"}]}`
	steps := []struct {
		what   string
		change func() error
		want   bool
	}{
		{"no policy", func() error { return nil }, false},
		{"SetQueueAttributes grants", func() error {
			return b.SetQueueAttributes(ctx, tidemq.SetQueueAttributesParams{Queue: "a-in", Attributes: map[string]string{"Policy": grant}})
		}, true},
		{"SetQueueAttributes removes", func() error {
			return b.SetQueueAttributes(ctx, tidemq.SetQueueAttributesParams{Queue: "a-in", Attributes: map[string]string{"Policy": ""}})
		}, false},
		{"AddPermission grants", func() error {
			return b.AddPermission(ctx, tidemq.AddPermissionParams{Queue: "a-in", Label: "b", AccountIDs: []string{"222222222222"}, Actions: []string{"SendMessage"}})
		}, true},
		{"RemovePermission removes", func() error {
			return b.RemovePermission(ctx, tidemq.RemovePermissionParams{Queue: "a-in", Label: "b"})
		}, false},
		{"SetQueueAttributes by the queue's region/name grants", func() error {
			return b.SetQueueAttributes(ctx, tidemq.SetQueueAttributesParams{Queue: "us-east-1/a-in", Attributes: map[string]string{"Policy": grant}})
		}, true},
		{"DeleteQueue and CreateQueue without it", func() error {
			if err := b.DeleteQueue(ctx, tidemq.DeleteQueueParams{Queue: "a-in"}); err != nil {
				return err
			}
			_, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "a-in"})
			return err
		}, false},
	}
	for _, s := range steps {
		if err := s.change(); err != nil {
			t.Fatalf("%s: %v", s.what, err)
		}
		_ = may() // read into the cache
		if got := may(); got != s.want {
			t.Errorf("after %s: team B may send %v, want %v", s.what, got, s.want)
		}
	}
}
