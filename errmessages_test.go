package tidemq

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// catalogueTexts are the string literals of errmessages.go: the templates
// and the reasons.
func catalogueTexts(t *testing.T) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "errmessages.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				texts[s] = true
			}
		}
		return true
	})
	if len(texts) < 30 {
		t.Fatalf("only %d texts in errmessages.go", len(texts))
	}
	return texts
}

// TestCatalogueTextsNotCopied: no Go file of the module other than the
// catalogue (errmessages.go) writes one of its texts: an error is raised
// through its constructor, so its words stay in one place. Tests, test
// data and brokertest (the conformance suite) are exempt: they pin the
// wire's texts on purpose.
func TestCatalogueTextsNotCopied(t *testing.T) {
	texts := catalogueTexts(t)
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (name == "testdata" || name == "brokertest" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || path == "errmessages.go" {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && texts[s] && len(s) > 12 {
					t.Errorf("%s: the catalogue's text %q is copied here; raise the error through its constructor", fset.Position(lit.Pos()), s)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestConstructorsFillTemplates: a constructor's error is its template's
// entry with the template filled, word for word as the wire has it.
func TestConstructorsFillTemplates(t *testing.T) {
	for _, c := range []struct {
		got  *Error
		code *ErrorCode
		text string
	}{
		{NonExistentQueue(), ErrQueueDoesNotExist, "The specified queue does not exist."},
		{InvalidAction("Nope"), ErrInvalidAction, "The action Nope is not valid for this endpoint."},
		{UnknownAttribute("X"), ErrInvalidAttributeName, "Unknown Attribute X."},
		{PurgeInProgress("q"), ErrPurgeQueueInProgress, "Only one PurgeQueue operation on q is allowed every 60 seconds."},
		{ExpiredReceiptHandle("h"), ErrInvalidParameterValue, "Value h for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired."},
		{VisibilityBeyondLimit(50000), ErrInvalidParameterValue, "Value 50000 for parameter VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the message is beyond the limit [43200 seconds]"},
		{QueueFull("q", 10, 8), ErrRequestThrottled, "Queue q holds 10 bytes of messages, at the server's limit of 8 (--max-queue-bytes): sends are refused until consumers drain it; retry later."},
		{InternalFailure(), ErrInternalFailure, "We encountered an internal error. Please try again."},
	} {
		if c.got.Code != c.code || c.got.Message != c.text {
			t.Errorf("%s: %q, want %s: %q", c.got.Code.Code, c.got.Message, c.code.Code, c.text)
		}
	}
}
