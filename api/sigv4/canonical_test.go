package sigv4

import (
	"net/http"
	"net/url"
	"testing"
)

func TestCanonicalURI(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{"http://h", "/"},
		{"http://h/", "/"},
		{"http://h/000000000000/my-queue", "/000000000000/my-queue"},
		{"http://h/000000000000/my%20queue", "/000000000000/my%2520queue"},
		{"http://h/a%2Fb/c", "/a%252Fb/c"},
		{"http://h/a%41b", "/a%2541b"}, // the wire form is kept, not normalised
		{"http://h/q:name@x", "/q%3Aname%40x"},
		{"http://h/~tilde_-.", "/~tilde_-."},
	} {
		u, err := url.Parse(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := canonicalURI(u); got != tc.want {
			t.Errorf("canonicalURI(%s) = %q, want %q", tc.raw, got, tc.want)
		}
	}
}

func TestCanonicalQuery(t *testing.T) {
	for _, tc := range []struct{ raw, exclude, want string }{
		{"", "", ""},
		{"b=2&a=1", "", "a=1&b=2"},
		{"a=2&a=1&a=10", "", "a=1&a=10&a=2"},
		{"k=a+b&k2=a%20b&k3=a%2Bb", "", "k=a%20b&k2=a%20b&k3=a%2Bb"},
		{"x=*!'()~&y=%7e&z=%2a", "", "x=%2A%21%27%28%29~&y=~&z=%2A"},
		{"flag&&empty=", "", "empty=&flag="},
		{"bad=%zz", "", "bad=%25zz"},
		{"u=%C3%BC", "", "u=%C3%BC"},
		{"X-Amz-Signature=abc&a=1", querySignature, "a=1"},
		// Sorting is by encoded name: '%' (0x25) sorts before 'A'.
		{"A=1&%21=2", "", "%21=2&A=1"},
	} {
		if got := canonicalQuery(parseQuery(tc.raw), tc.exclude); got != tc.want {
			t.Errorf("canonicalQuery(%q) = %q, want %q", tc.raw, got, tc.want)
		}
	}
}

func TestCanonicalHeaders(t *testing.T) {
	r, _ := http.NewRequest(http.MethodPost, "http://example.com:8080/", nil)
	r.Header.Set("X-Spaces", "  a   b \t c  ")
	r.Header.Add("X-Multi", "one")
	r.Header.Add("X-Multi", " two  three ")
	r.Header["lower-case"] = []string{"v"} // not canonicalised by Set
	r.ContentLength = 12
	got := canonicalHeaders(r, signedHeaderNames("content-length;host;lower-case;x-missing;x-multi;X-Spaces"))
	want := "content-length:12\nhost:example.com:8080\nlower-case:v\nx-missing:\nx-multi:one,two three\nx-spaces:a b c\n"
	if got != want {
		t.Errorf("canonicalHeaders =\n%q\nwant\n%q", got, want)
	}
}

func TestNormalizeHeaderValue(t *testing.T) {
	for in, want := range map[string]string{
		"":                  "",
		"plain":             "plain",
		"  lead and trail ": "lead and trail",
		"a  b":              "a b",
		"a\t\tb":            "a b",
		"a \t b":            "a b",
		"\"a   b\"":         "\"a b\"",
	} {
		if got := normalizeHeaderValue(in); got != want {
			t.Errorf("normalizeHeaderValue(%q) = %q, want %q", in, got, want)
		}
	}
}
