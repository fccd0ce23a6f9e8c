package topology

import (
	"bytes"
	"encoding/json"
	"net/url"
	"path/filepath"
	"testing"
)

// SARIF's artifactLocation.uri is a URI reference: relative paths stay
// relative with forward slashes, absolute paths become file:// URIs, and
// what a URI cannot hold is percent-encoded.
func TestSARIFURI(t *testing.T) {
	cases := []struct{ file, want string }{
		{"tidemq.yaml", "tidemq.yaml"},
		{filepath.Join("lambdas", "template.yaml"), "lambdas/template.yaml"},
		{filepath.Join("..", "..", "topology", "testdata", "seed000-morpheus.yaml"), "../../topology/testdata/seed000-morpheus.yaml"},
		{filepath.Join("my stack", "t#1?.yaml"), "my%20stack/t%231%3F.yaml"},
		{"100%.yaml", "100%25.yaml"},
		{"a:b.yaml", "./a:b.yaml"}, // not the scheme "a"
		{"", ""},
	}
	if filepath.Separator == '/' {
		cases = append(cases,
			struct{ file, want string }{"/tmp/tidemq.yaml", "file:///tmp/tidemq.yaml"},
			struct{ file, want string }{"/home/me/my stack/t#1.yaml", "file:///home/me/my%20stack/t%231.yaml"},
		)
	} else {
		cases = append(cases, struct{ file, want string }{`C:\stacks\t 1.yaml`, "file:///C:/stacks/t%201.yaml"})
	}
	for _, c := range cases {
		got := sarifURI(c.file)
		if got != c.want {
			t.Errorf("sarifURI(%q) = %q, want %q", c.file, got, c.want)
		}
		u, err := url.Parse(got)
		if err != nil {
			t.Errorf("%q does not parse as a URI reference: %v", got, err)
			continue
		}
		if filepath.IsAbs(c.file) {
			if u.Scheme != "file" || (filepath.FromSlash(u.Path) != c.file && filepath.FromSlash(u.Path[1:]) != c.file) {
				t.Errorf("%q: scheme %q, path %q do not give back %q", got, u.Scheme, u.Path, c.file)
			}
		} else if u.Scheme != "" || u.Host != "" || (c.file != "" && filepath.Clean(filepath.FromSlash(u.Path)) != filepath.Clean(c.file)) {
			t.Errorf("%q is not the relative reference of %q: %+v", got, c.file, u)
		}
	}
}

func TestWriteFindingsSARIFLocation(t *testing.T) {
	abs, err := filepath.Abs(filepath.Join("testdata", "a stack.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	fs := []Finding{
		{File: filepath.Join("lambdas", "template.yaml"), Line: 3, Rule: RuleMissingDLQ, Severity: SeverityWarning, Message: "m"},
		{File: abs, Line: 0, Rule: RuleUnconsumedQueue, Severity: SeverityError, Message: "m"},
	}
	var b bytes.Buffer
	if err := WriteFindings(&b, "sarif", fs); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs []struct {
			Results []struct {
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           struct{ StartLine int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range doc.Runs[0].Results {
		uris = append(uris, r.Locations[0].PhysicalLocation.ArtifactLocation.URI)
	}
	want := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	if filepath.Separator != '/' {
		want = (&url.URL{Scheme: "file", Path: "/" + filepath.ToSlash(abs)}).String()
	}
	if len(uris) != 2 || uris[0] != "lambdas/template.yaml" || uris[1] != want {
		t.Errorf("uris = %q, want lambdas/template.yaml and %s", uris, want)
	}
	if line := doc.Runs[0].Results[1].Locations[0].PhysicalLocation.Region.StartLine; line != 1 {
		t.Errorf("startLine %d, want 1", line)
	}
}
