package trigger

import (
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Secrets of a target.
//
// A target may carry credentials, and what counts as one is decided by
// where it sits, not by its name: every HTTP header value (Authorization,
// but any custom header may hold a token) and the userinfo of the URL
// (user:password@, or a token given as the user), and every value of a
// function target's Environment (API keys live there). A command target
// has none: its arguments are shown as given.
//
// The server needs the secrets, so its store keeps them as given (the
// Registry, in the data directory for `tidemq serve`: whoever can read the
// data directory is trusted, as they can read the messages). Releases
// before the one store kept them in triggers.json (0600), which the
// upgrade imports and renames (upgrade.go). Nothing else shows them: every
// Status the Manager returns, and so every admin API response, shows each
// header value and the URL's userinfo as Redacted, and carries
// SecretsDigest so that a client that knows the secrets (tidemq apply) can
// tell whether the server's are the same. No error message or log line
// quotes them.
//
// An update may give Redacted where a secret was (a client that did
// GET-modify-PUT): the stored value is kept. Kept secrets stay with the
// origin (scheme, host and port) they were given for: an update that moves
// an HTTP target to another origin must give them again, or whoever may
// update a trigger could point it at their own server and receive them.

// Redacted stands for a secret in what the admin API returns; given back in
// an update, it keeps the stored value.
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

// WithoutSecrets returns a copy of t that shows no secret: header values
// and the URL's userinfo replaced by Redacted.
func (t Target) WithoutSecrets() Target {
	out := t
	out.URL = RedactURL(t.URL)
	if t.Headers != nil {
		out.Headers = make(map[string]string, len(t.Headers))
		for k := range t.Headers {
			out.Headers[k] = Redacted
		}
	}
	out.Command = slices.Clone(t.Command)
	if t.Function != nil {
		f := *t.Function
		if f.Environment != nil {
			f.Environment = make(map[string]string, len(t.Function.Environment))
			for k := range t.Function.Environment {
				f.Environment[k] = Redacted
			}
		}
		out.Function = &f
	}
	return out
}

// hasRedacted reports where t still holds Redacted in place of a secret.
func (t *Target) hasRedacted() (where string, ok bool) {
	for _, k := range sortedHeaderNames(t.Headers) {
		if t.Headers[k] == Redacted {
			return fmt.Sprintf("Target.Headers[%q]", k), true
		}
	}
	if userinfo(t.URL) == Redacted {
		return "the userinfo of Target.URL", true
	}
	if t.Function != nil {
		for _, k := range sortedHeaderNames(t.Function.Environment) {
			if t.Function.Environment[k] == Redacted {
				return fmt.Sprintf("Target.Function.Environment[%q]", k), true
			}
		}
	}
	return "", false
}

// keepEnvironment resolves, in t (a target being updated), each Redacted
// value of its function's Environment to the stored one of old. (Who may
// update a function trigger may run code on the server: the values are
// not bound to the code they were given for.)
func (t *Target) keepEnvironment(old *Target) error {
	if t.Function == nil {
		return nil
	}
	for _, k := range sortedHeaderNames(t.Function.Environment) {
		if t.Function.Environment[k] != Redacted {
			continue
		}
		var v string
		ok := false
		if old.Function != nil {
			v, ok = old.Function.Environment[k]
		}
		if !ok {
			return invalid("Target.Function.Environment[%q] is %s, the placeholder of a stored secret, but the function has no such variable: give its value", k, Redacted)
		}
		t.Function.Environment[k] = v
	}
	return nil
}

// SecretsDigest is a salted, iterated digest (PBKDF2-SHA256, salted with
// the trigger's name) of the secrets of c's target, "" when it has none.
// Equal digests mean equal secrets; the digest does not give the secrets
// back, though a weak one could be guessed from it at PBKDF2's pace.
func SecretsDigest(c *Config) string {
	s := struct {
		Headers     map[string]string `json:",omitempty"`
		UserInfo    string            `json:",omitempty"`
		Environment map[string]string `json:",omitempty"`
	}{Headers: c.Target.Headers, UserInfo: userinfo(c.Target.URL)}
	if c.Target.Function != nil {
		s.Environment = c.Target.Function.Environment
	}
	if len(s.Headers) == 0 && s.UserInfo == "" && len(s.Environment) == 0 {
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

// keepSecrets resolves, in t (a target being updated), each Redacted value
// to the stored one of old, and checks that the secrets kept (those, and
// every header of old when the update did not give Target.Headers) stay
// with the origin they were given for.
func (t *Target) keepSecrets(old *Target, headersGiven bool) error {
	var kept []string
	if headersGiven {
		for _, k := range sortedHeaderNames(t.Headers) {
			if t.Headers[k] != Redacted {
				continue
			}
			v, ok := lookupHeader(old.Headers, k)
			if !ok {
				return invalid("Target.Headers[%q] is %s, the placeholder of a stored secret, but the trigger has no such header: give its value", k, Redacted)
			}
			t.Headers[k] = v
			kept = append(kept, fmt.Sprintf("header %s", k))
		}
	} else {
		for _, k := range sortedHeaderNames(t.Headers) {
			kept = append(kept, fmt.Sprintf("header %s", k))
		}
	}
	if i, j, ok := userinfoSpan(t.URL); ok && t.URL[i:j] == Redacted {
		ui := userinfo(old.URL)
		if ui == "" {
			return invalid("the userinfo of Target.URL is %s, the placeholder of a stored secret, but the trigger's URL has none: give it", Redacted)
		}
		t.URL = t.URL[:i] + ui + t.URL[j:]
		kept = append(kept, "the URL's userinfo")
	}
	if len(kept) > 0 && t.URL != "" && origin(t.URL) != origin(old.URL) {
		from := origin(old.URL)
		if from == "" {
			from = "a command"
		}
		return invalid("Target.URL moves from %s to %s: secrets given for one origin are not sent to another, so give the values of %s again", from, origin(t.URL), strings.Join(kept, ", "))
	}
	return nil
}

// origin is scheme://host[:port] of a URL, lower-cased; "" when raw is not
// a URL.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

// lookupHeader finds a header by name, as HTTP compares names: without
// regard to case.
func lookupHeader(h map[string]string, name string) (string, bool) {
	if v, ok := h[name]; ok {
		return v, true
	}
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

func sortedHeaderNames(h map[string]string) []string {
	ks := make([]string, 0, len(h))
	for k := range h {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
