package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tidemq/tidemq/authz"
)

// The credentials file's watcher lives as long as the server: close ends
// it even though runServe's context is still live (a server stopped and
// started again in one process left one watcher behind per start).
func TestAccessCloseStopsTheCredentialsWatcher(t *testing.T) {
	dir := t.TempDir()
	creds := filepath.Join(dir, "credentials")
	if err := os.WriteFile(creds, []byte("AKID:SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := &serveOptions{auth: true, credentialsFile: creds, inMemory: true, region: "us-east-1", accountID: "000000000000"}
	o.access.reloadPeriod = time.Millisecond
	if _, err := o.openAccess(context.Background(), slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if o.access.watching == nil {
		t.Fatal("no watcher started")
	}
	o.access.close()
	select {
	case <-o.access.watching:
	case <-time.After(5 * time.Second):
		t.Fatal("the watcher still runs after close")
	}
}

// openAccess opens what `tidemq serve` opens as its audit and credentials
// parts (serve_server.go), in that order.
func (o *serveOptions) openAccess(ctx context.Context, log *slog.Logger) (*authz.Authenticator, error) {
	if err := o.openAudit(log); err != nil {
		return nil, err
	}
	return o.openCredentials(ctx, log)
}

// close stops those parts as Close does: the watcher, then the audit log.
func (a *accessOptions) close() {
	a.stopWatching()
	_ = a.closeAudit()
}
