package trigger

import (
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// Secrets of a target.
//
// A target may carry credentials, and what counts as one is decided by
// where it sits, not by its name: every HTTP header value (Authorization,
// but any custom header may hold a token) and the userinfo of the URL
// (user:password@, or a token given as the user). A command target has
// none: Target has no environment, and its arguments are shown as given.
//
// SecretsDigest stands for them where they must not be shown but a client
// that knows them (tidemq apply) must tell whether the server's are the
// same; RedactURL shows a URL without its userinfo.

// Redacted stands for a secret where it is not shown.
const Redacted = "********"

// digestIterations is the PBKDF2 work factor of SecretsDigest: the
// minimum of SCRAM-SHA-256 (RFC 7677), whose stored verifiers are of the
// same kind. About half a millisecond per trigger, computed once per
// change.
const digestIterations = 4096

// RedactURL returns raw with its userinfo, if it has one, replaced by
// Redacted. It works on the text, so that what is not secret is shown as
// it was given, and a URL that does not parse is redacted too.
func RedactURL(raw string) string {
	i, j, ok := userinfoSpan(raw)
	if !ok {
		return raw
	}
	return raw[:i] + Redacted + raw[j:]
}

// userinfoSpan finds the userinfo of a URL, raw[i:j]: between "://" and
// the last '@' of the authority (which ends at the first '/', '?' or '#',
// as net/url reads it). ok is false when there is none, or it is empty.
func userinfoSpan(raw string) (i, j int, ok bool) {
	k := strings.Index(raw, "://")
	if k < 0 {
		return 0, 0, false
	}
	start := k + len("://")
	end := len(raw)
	if e := strings.IndexAny(raw[start:], "/?#"); e >= 0 {
		end = start + e
	}
	at := strings.LastIndexByte(raw[start:end], '@')
	if at <= 0 {
		return 0, 0, false
	}
	return start, start + at, true
}

// userinfo returns the userinfo of a URL, "" when it has none.
func userinfo(raw string) string {
	i, j, ok := userinfoSpan(raw)
	if !ok {
		return ""
	}
	return raw[i:j]
}

// SecretsDigest is a salted, iterated digest (PBKDF2-SHA256, salted with
// the trigger's name) of the secrets of c's target, "" when it has none.
// Equal digests mean equal secrets; the digest does not give the secrets
// back, though a weak one could be guessed from it at PBKDF2's pace.
func SecretsDigest(c *Config) string {
	s := struct {
		Headers  map[string]string `json:",omitempty"`
		UserInfo string            `json:",omitempty"`
	}{Headers: c.Target.Headers, UserInfo: userinfo(c.Target.URL)}
	if len(s.Headers) == 0 && s.UserInfo == "" {
		return ""
	}
	b, _ := json.Marshal(s) // map keys sorted: a canonical form
	key, err := pbkdf2.Key(sha256.New, string(b), []byte("tidemq trigger secrets\x00"+c.Name), digestIterations, sha256.Size)
	if err != nil {
		// Only a FIPS 140-3 mode refusing the parameters gets here; a
		// digest that matches nothing makes tidemq apply update.
		return "unavailable: " + err.Error()
	}
	return "pbkdf2-sha256:" + hex.EncodeToString(key)
}
