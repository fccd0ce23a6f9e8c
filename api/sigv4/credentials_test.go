package sigv4

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "credentials")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadCredentialsINI(t *testing.T) {
	p := writeFile(t, `# shared credentials
; another comment

[default]
aws_access_key_id = AKIDDEFAULT
aws_secret_access_key = wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY
aws_session_token = ignored

[other]
AWS_ACCESS_KEY_ID=AKIDOTHER
AWS_SECRET_ACCESS_KEY=s3cr3t=with=equals

[profile sso-only]
sso_start_url = https://example.com
region = eu-west-1
`)
	got, err := LoadCredentials(p)
	if err != nil {
		t.Fatal(err)
	}
	want := Credentials{
		"AKIDDEFAULT": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
		"AKIDOTHER":   "s3cr3t=with=equals",
	}
	if !maps.Equal(got, want) {
		t.Errorf("LoadCredentials = %v, want %v", got, want)
	}
}

func TestLoadCredentialsPairs(t *testing.T) {
	p := writeFile(t, "# id:secret\r\n\r\nAKID1:secret1\r\n  AKID2 : sec:ret2  \r\nAKID1:secret1\r\n")
	got, err := LoadCredentials(p)
	if err != nil {
		t.Fatal(err)
	}
	want := Credentials{"AKID1": "secret1", "AKID2": "sec:ret2"}
	if !maps.Equal(got, want) {
		t.Errorf("LoadCredentials = %v, want %v", got, want)
	}
}

func TestLoadCredentialsErrors(t *testing.T) {
	for name, tc := range map[string]struct{ content, want string }{
		"empty":          {"# nothing\n\n", "no credentials found"},
		"pair no colon":  {"AKID1:s1\nAKIDONLY\n", ":2: expected AKID:SECRET"},
		"pair no secret": {"AKID1:\n", ":1: empty secret"},
		"pair no id":     {":secret\n", ":1: empty access key id"},
		"pair conflict":  {"A:s1\nA:s2\n", `:2: access key id "A" given twice with different secrets`},
		"ini no secret":  {"[a]\naws_access_key_id = X\n", `:1: profile [a] has aws_access_key_id but no aws_secret_access_key`},
		"ini no id":      {"[a]\n\naws_secret_access_key = s\n[b]\n", `:1: profile [a] has aws_secret_access_key but no aws_access_key_id`},
		"ini outside":    {"[a]\n", "no credentials found"},
		"ini bad line":   {"[a]\njunk\n", ":2: expected [profile] or key = value"},
		"ini header":     {"[a\n", ":1: unterminated section header"},
		"ini repeated":   {"[a]\naws_access_key_id=X\naws_access_key_id=Y\n", ":3: aws_access_key_id repeated in profile [a] (first on line 2)"},
		"ini conflict":   {"[a]\naws_access_key_id=X\naws_secret_access_key=1\n[b]\naws_access_key_id=X\naws_secret_access_key=2\n", `:5: profile [b]: access key id "X" given twice`},
		"ini bad id":     {"[a]\naws_access_key_id=X/Y\naws_secret_access_key=1\n", `:2: profile [a]: access key id "X/Y" contains`},
	} {
		t.Run(name, func(t *testing.T) {
			p := writeFile(t, tc.content)
			_, err := LoadCredentials(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want one containing %q", err, tc.want)
			}
			if msg := strings.ReplaceAll(err.Error(), p, ""); strings.Contains(msg, "s1") || strings.Contains(msg, "s2") {
				t.Errorf("error %q reveals a secret", err)
			}
		})
	}
	if _, err := LoadCredentials(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("LoadCredentials(missing file) succeeded")
	}
}

func TestParseCredentialPairs(t *testing.T) {
	got, err := ParseCredentialPairs(" AKID1:secret1 ,AKID2:se/cr+et2,, ")
	if err != nil {
		t.Fatal(err)
	}
	want := Credentials{"AKID1": "secret1", "AKID2": "se/cr+et2"}
	if !maps.Equal(got, want) {
		t.Errorf("ParseCredentialPairs = %v, want %v", got, want)
	}
	for s, msg := range map[string]string{
		"":                  "no credentials given",
		" , ":               "no credentials given",
		"AKID1:s1,oops":     "credential pair 2: expected AKID:SECRET",
		"AKID1:s1,AKID1:s2": `credential pair 2: access key id "AKID1" given twice`,
		"AK ID:s1":          "contains",
		"AKID1:":            "credential pair 1: empty secret",
	} {
		_, err := ParseCredentialPairs(s)
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseCredentialPairs(%q) error = %v, want one containing %q", s, err, msg)
		}
	}
}
