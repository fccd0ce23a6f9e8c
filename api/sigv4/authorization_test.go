package sigv4

import (
	"net/http"
	"strings"
	"testing"
)

const sampleAuth = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20250101/us-east-1/sqs/aws4_request, " +
	"SignedHeaders=content-type;host;x-amz-date, Signature=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestParseAuthorization(t *testing.T) {
	want := authorization{
		Algorithm:     "AWS4-HMAC-SHA256",
		Credential:    "AKIDEXAMPLE/20250101/us-east-1/sqs/aws4_request",
		SignedHeaders: "content-type;host;x-amz-date",
		Signature:     "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	}
	for _, h := range []string{
		sampleAuth,
		strings.ReplaceAll(sampleAuth, ", ", ","),                  // commas only
		strings.ReplaceAll(sampleAuth, ", ", " "),                  // whitespace only
		"  " + strings.ReplaceAll(sampleAuth, ", ", " ,\t ") + " ", // both, padded
		strings.Replace(sampleAuth, "Signature=", "Extra=ignored, Signature=", 1),
	} {
		got, err := parseAuthorization(h)
		if err != nil {
			t.Errorf("parseAuthorization(%q): %v", h, err)
			continue
		}
		if got != want {
			t.Errorf("parseAuthorization(%q) = %+v, want %+v", h, got, want)
		}
	}
}

func TestParseAuthorizationErrors(t *testing.T) {
	for h, want := range map[string]string{
		"AWS4-HMAC-SHA256 Credential= AKID/20250101/us-east-1/sqs/aws4_request": "'AKID/20250101/us-east-1/sqs/aws4_request' not a valid key=value pair (missing equal-sign) in Authorization header",
		"AWS4-HMAC-SHA256 Signature=a, Signature=b":                             "'Signature' given more than once",
	} {
		_, err := parseAuthorization(h)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseAuthorization(%q) error = %v, want one containing %q", h, err, want)
		}
	}
	// Missing elements are not a syntax error; the verifier reports them.
	a, err := parseAuthorization("AWS4-HMAC-SHA256")
	if err != nil || a.Algorithm != "AWS4-HMAC-SHA256" || a.Credential != "" {
		t.Errorf("parseAuthorization(bare algorithm) = %+v, %v", a, err)
	}
}

func TestParseCredential(t *testing.T) {
	c, ok := parseCredential("AKID/20250101/us-east-1/sqs/aws4_request//")
	if !ok || c != (credential{"AKID", "20250101", "us-east-1", "sqs", "aws4_request"}) {
		t.Errorf("parseCredential = %+v, %v", c, ok)
	}
	if c.Scope() != "20250101/us-east-1/sqs/aws4_request" {
		t.Errorf("Scope() = %q", c.Scope())
	}
	for _, bad := range []string{"", "a/b/c/d", "a/b/c/d/e/f"} {
		if _, ok := parseCredential(bad); ok {
			t.Errorf("parseCredential(%q) accepted", bad)
		}
	}
}

func TestAccessKeyOf(t *testing.T) {
	r, _ := http.NewRequest(http.MethodPost, "http://h/", nil)
	if got := AccessKeyOf(r); got != "" {
		t.Errorf("AccessKeyOf(unsigned) = %q", got)
	}
	r.Header.Set("Authorization", sampleAuth)
	if got := AccessKeyOf(r); got != "AKIDEXAMPLE" {
		t.Errorf("AccessKeyOf(header) = %q", got)
	}
	r.Header.Set("Authorization", "Basic dXNlcjpwYXNz")
	if got := AccessKeyOf(r); got != "" {
		t.Errorf("AccessKeyOf(basic) = %q", got)
	}
	q, _ := http.NewRequest(http.MethodGet, "http://h/?X-Amz-Credential=AKIDQ%2F20250101%2Fus-east-1%2Fsqs%2Faws4_request", nil)
	if got := AccessKeyOf(q); got != "AKIDQ" {
		t.Errorf("AccessKeyOf(query) = %q", got)
	}
}

// FuzzParseAuthorization feeds arbitrary headers to the parser and to the
// whole verifier: neither may panic, whatever the input.
func FuzzParseAuthorization(f *testing.F) {
	for _, seed := range []string{
		sampleAuth,
		"",
		"AWS4-HMAC-SHA256",
		"AWS4-HMAC-SHA256 ",
		"AWS4-HMAC-SHA256 ,,,",
		"AWS4-HMAC-SHA256 Credential=",
		"AWS4-HMAC-SHA256 Credential=a/b/c/d/e, SignedHeaders=, Signature=",
		"AWS4-HMAC-SHA256 Credential=/////, SignedHeaders=;;;, Signature=%",
		"AWS4-HMAC-SHA256 =, ==, a=b=c",
		"AWS4-X Credential=AKID/20250101/us-east-1/sqs/aws4_request SignedHeaders=host Signature=00",
		"Basic dXNlcjpwYXNz",
		"AWS AKIDEXAMPLE:c2lnbmF0dXJl",
		"AWS4-HMAC-SHA256\tCredential=AKID/20250101/us-east-1/sqs/aws4_request\tSignature=x",
		"AWS4-\xff\xfe Credential=\x00/\x00",
	} {
		f.Add(seed)
	}
	v := &Verifier{Credentials: Credentials{"AKID": "secret"}, Services: []string{"sqs"}}
	f.Fuzz(func(t *testing.T, header string) {
		a, err := parseAuthorization(header)
		if err == nil {
			for _, field := range []string{a.Credential, a.SignedHeaders, a.Signature} {
				if strings.ContainsAny(field, " \t,") {
					t.Fatalf("element %q holds a separator", field)
				}
			}
			if c, ok := parseCredential(a.Credential); ok {
				_ = c.Scope()
			}
			_ = signedHeaderNames(a.SignedHeaders)
		}
		r, _ := http.NewRequest(http.MethodPost, "http://h/", nil)
		r.Header["Authorization"] = []string{header}
		r.Header.Set("X-Amz-Date", "20250101T000000Z")
		_ = AccessKeyOf(r)
		if _, err := v.Authenticate(r, nil); err == nil {
			t.Fatalf("Authenticate accepted %q", header)
		}
	})
}
