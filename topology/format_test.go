package topology

import (
	"bytes"
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
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

// sarifLog mirrors the parts of the SARIF 2.1.0 schema that tidemq lint
// writes, with no room for other fields: decoding with
// DisallowUnknownFields fails on a property the schema does not have
// where we put it (every object there has additionalProperties false).
type sarifLog struct {
	Schema  string `json:"$schema"`
	Version string `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Name           string `json:"name"`
				InformationURI string `json:"informationUri"`
				Rules          []struct {
					ID               string `json:"id"`
					Name             string `json:"name"`
					ShortDescription struct {
						Text string `json:"text"`
					} `json:"shortDescription"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Results []struct {
			RuleID  string `json:"ruleId"`
			Level   string `json:"level"`
			Message struct {
				Text string `json:"text"`
			} `json:"message"`
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct {
						URI string `json:"uri"`
					} `json:"artifactLocation"`
					Region struct {
						StartLine int `json:"startLine"`
					} `json:"region"`
				} `json:"physicalLocation"`
				LogicalLocations []struct {
					Name               string `json:"name"`
					FullyQualifiedName string `json:"fullyQualifiedName"`
					Kind               string `json:"kind"`
				} `json:"logicalLocations"`
			} `json:"locations"`
		} `json:"results"`
	} `json:"runs"`
}

// SARIF names each finding's resource in its location's logicalLocations
// (kind "resource", one of SARIF's well-known kinds) and in the message,
// and keeps the 2.1.0 shape.
func TestSARIFLogicalLocation(t *testing.T) {
	c, _, err := ImportFile("testdata/seed000-morpheus.yaml", ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fs := Lint(c)
	fs = append(fs, Finding{File: "x.yaml", Line: 1, Rule: RuleMissingDLQ, Severity: SeverityWarning, Message: "no resource"})
	var b bytes.Buffer
	if err := WriteFindings(&b, "sarif", fs); err != nil {
		t.Fatal(err)
	}
	var doc sarifLog
	dec := json.NewDecoder(&b)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("not the SARIF shape: %v", err)
	}
	if doc.Version != "2.1.0" || len(doc.Runs) != 1 || len(doc.Runs[0].Results) != len(fs) {
		t.Fatalf("version %q, runs %d", doc.Version, len(doc.Runs))
	}
	for i, r := range doc.Runs[0].Results {
		f := fs[i]
		if r.Level != map[Severity]string{SeverityError: "error", SeverityWarning: "warning", SeverityInfo: "note"}[f.Severity] || r.Message.Text == "" {
			t.Errorf("result %d: level %q message %q", i, r.Level, r.Message.Text)
		}
		if len(r.Locations) != 1 || r.Locations[0].PhysicalLocation.Region.StartLine < 1 {
			t.Fatalf("result %d: locations %+v", i, r.Locations)
		}
		ll := r.Locations[0].LogicalLocations
		if f.Resource == "" {
			if len(ll) != 0 {
				t.Errorf("result %d: logical locations without a resource: %+v", i, ll)
			}
			continue
		}
		if len(ll) != 1 || ll[0].Name != f.Resource || ll[0].FullyQualifiedName != f.Resource || ll[0].Kind != "resource" {
			t.Errorf("result %d: logicalLocations %+v, want %s", i, ll, f.Resource)
		}
		if !strings.HasPrefix(r.Message.Text, f.Resource+": ") {
			t.Errorf("result %d: message does not name %s: %s", i, f.Resource, r.Message.Text)
		}
	}
	if got := doc.Runs[0].Results[2].Locations[0].LogicalLocations[0].Name; got != "EnrichmentPipelineQueue" {
		t.Errorf("TQ005 names %q", got)
	}
}
