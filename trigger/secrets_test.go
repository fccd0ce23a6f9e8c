package trigger_test

import (
	"testing"

	"github.com/tidemq/tidemq/trigger"
)

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://h/p":                  "http://h/p",
		"https://u:p@h:8/p?q=1#f":     "https://********@h:8/p?q=1#f",
		"https://tok@h/":              "https://********@h/",
		"https://a@b:p@h/":            "https://********@h/", // the last '@' ends the userinfo, as net/url reads it
		"http://h/p?email=a@b":        "http://h/p?email=a@b",
		"http://h#a@b":                "http://h#a@b",
		"http://@h/":                  "http://@h/",
		"http://u:p@h:port-not-a-url": "http://********@h:port-not-a-url",
		"":                            "",
	} {
		if got := trigger.RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSecretsDigest(t *testing.T) {
	c := func(name, url string, h map[string]string) *trigger.Config {
		return &trigger.Config{Name: name, Target: trigger.Target{URL: url, Headers: h}}
	}
	a := trigger.SecretsDigest(c("t", "http://u:p@h/", map[string]string{"A": "1", "B": "2"}))
	if a == "" || a != trigger.SecretsDigest(c("t", "http://u:p@h/other", map[string]string{"B": "2", "A": "1"})) {
		t.Errorf("equal secrets, different digests")
	}
	for i, other := range []*trigger.Config{
		c("t", "http://u:q@h/", map[string]string{"A": "1", "B": "2"}),
		c("t", "http://u:p@h/", map[string]string{"A": "1", "B": "3"}),
		c("t", "http://u:p@h/", map[string]string{"A": "1"}),
		c("t2", "http://u:p@h/", map[string]string{"A": "1", "B": "2"}), // salted with the name
	} {
		if trigger.SecretsDigest(other) == a {
			t.Errorf("%d: different secrets, same digest", i)
		}
	}
	if d := trigger.SecretsDigest(c("t", "http://h/", nil)); d != "" {
		t.Errorf("no secrets, digest %q", d)
	}
}
