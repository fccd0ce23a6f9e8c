package sns

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The service keeps no storage technology: main opens the outbox store and
// injects it. Only the in-memory store (the default without a Dir) is
// imported.
func TestNoStorageTechnology(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/tidemq/tidemq/storage/") && path != "github.com/tidemq/tidemq/storage/mem" {
				t.Errorf("%s imports %s", f, path)
			}
		}
	}
}

// A durable topic store needs a durable outbox: Open refuses a Dir without
// an Outbox instead of quietly recording publishes in memory.
func TestOpenNeedsAnOutboxWithADir(t *testing.T) {
	dir := t.TempDir()
	if s, err := Open(Options{Dir: dir}); err == nil {
		s.Close()
		t.Fatal("Open with a Dir and no Outbox succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, OutboxDir)); !os.IsNotExist(err) {
		t.Fatalf("Open made an outbox directory itself: %v", err)
	}
}
