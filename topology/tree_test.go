package topology

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// laughs is a "billion laughs" document: levels of aliases, each a list
// of ten of the level below, expanding to 10^levels values.
func laughs(levels int, prefix string) string {
	var b strings.Builder
	b.WriteString(prefix)
	b.WriteString("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < levels; i++ {
		ref := fmt.Sprintf("*l%d", i-1)
		fmt.Fprintf(&b, "l%d: &l%d [%s%s]\n", i, i, strings.Repeat(ref+", ", 9), ref)
	}
	return b.String()
}

// TestAliasBombIsRejected: aliases share the anchored value, but decoding,
// evaluating and linting walk the expanded document; a document that
// expands past MaxExpandedValues is an error, at once, not an OOM.
func TestAliasBombIsRejected(t *testing.T) {
	for name, doc := range map[string]string{
		"tidemq.yaml": laughs(9, ""),
		"template":    "Resources:\n  Q:\n    Type: AWS::SQS::Queue\n    Properties:\n      Tags:\n" + indent(laughs(9, ""), "        x"),
	} {
		start := time.Now()
		_, err := Parse([]byte(doc))
		if name == "template" {
			_, _, err = Import([]byte(doc), ImportOptions{})
		}
		if err == nil || !strings.Contains(err.Error(), "billion laughs") {
			t.Errorf("%s: err = %v", name, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: took %s", name, d)
		}
	}
	// Below the bound, aliases work as before: the document is decoded, and
	// its levels are reported as unknown fields (which one comes first
	// depends on map order).
	c, err := Parse([]byte(laughs(3, "") + "queues: [{name: q}]\n"))
	if err == nil || !strings.Contains(err.Error(), `unknown field "l`) || strings.Contains(err.Error(), "billion laughs") {
		t.Errorf("err = %v, c = %+v", err, c)
	}
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return prefix + strings.Join(lines, "\n"+prefix) + "\n"
}

// TestExpandedSize counts what aliases and merge keys expand to.
func TestExpandedSize(t *testing.T) {
	root, err := parseTree([]byte("a: &a {x: 1, y: [1, 2]}\nb: [*a, *a]\nc: {<<: *a, z: 3}\n"))
	if err != nil {
		t.Fatal(err)
	}
	// a: map(1) + x(1) + y: seq(1) + 2 = 5; b: 1 + 2×5 = 11;
	// c: 1 + x(1) + y(3) + z(1) = 6; root: 1 + 5 + 11 + 6 = 23.
	if root.size != 23 {
		t.Errorf("size = %d, want 23", root.size)
	}
}

// TestExtensionKeysAreDataInMaps: x- keys are ignored where they would be
// fields, but in tags and headers they are data, with or without aliases
// elsewhere in the file (a file with an anchor is decoded from its
// resolved tree, which once dropped every x- key: x-api-key headers
// vanished).
func TestExtensionKeysAreDataInMaps(t *testing.T) {
	body := `functions:
  - name: f
    x-note: ignored
    url: http://127.0.0.1:1/
    headers: {x-api-key: secret, X-Other: o}
queues:
  - name: q
    x-owner: ignored
    redrivePolicy: {deadLetterQueue: d, maxReceiveCount: 1, x-why: ignored}
    tags: {x-team: shop}
`
	for _, head := range []string{"", "x-base: &base {timeout: 10}\n"} {
		doc := head + body
		if head != "" {
			doc = strings.Replace(doc, "    x-note: ignored\n", "    <<: *base\n", 1)
		}
		c, err := Parse([]byte(doc))
		if err != nil {
			t.Fatalf("aliases %v: %v", head != "", err)
		}
		f, q := c.Function("f"), c.Queue("q")
		if f.Headers["x-api-key"] != "secret" || f.Headers["X-Other"] != "o" || q.Tags["x-team"] != "shop" {
			t.Errorf("aliases %v: headers %v, tags %v", head != "", f.Headers, q.Tags)
		}
		if head != "" && (f.Timeout == nil || *f.Timeout != 10) {
			t.Errorf("merge key not applied: %+v", f)
		}
	}
}
