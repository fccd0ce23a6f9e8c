package sqs

import (
	"net/url"
	"strings"

	"github.com/tidemq/tidemq"
)

// baseURL is the scheme and host that queue URLs start with: Config.PublicURL
// when set, otherwise what the client used to reach us.
func (c *call) baseURL() string {
	if c.h.cfg.PublicURL != "" {
		return c.h.cfg.PublicURL
	}
	scheme := "http"
	if c.r.TLS != nil {
		scheme = "https"
	}
	if p := c.r.Header.Get("X-Forwarded-Proto"); p != "" {
		p, _, _ = strings.Cut(p, ",")
		if p = strings.ToLower(strings.TrimSpace(p)); p == "http" || p == "https" {
			scheme = p
		}
	}
	host := c.r.Host
	if host == "" && c.r.URL != nil {
		host = c.r.URL.Host
	}
	return scheme + "://" + host
}

// queueURL is the URL of the named queue: <base>/<account>/<name>.
func (c *call) queueURL(name string) string {
	return c.baseURL() + "/" + c.h.cfg.AccountID + "/" + name
}

// queueURLs maps names to URLs; never nil.
func (c *call) queueURLs(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, c.queueURL(n))
	}
	return out
}

// queue resolves the queue a request is about: its QueueUrl member or, when
// that is absent, the request path (Query clients such as Java SDK v1 post
// to the queue URL and leave QueueUrl out).
func (c *call) queue(queueURL string) (string, error) {
	if queueURL == "" {
		if path := strings.Trim(c.r.URL.Path, "/"); path != "" {
			return c.h.queueName(path)
		}
		return "", tidemq.MissingParameter("QueueUrl")
	}
	return c.h.queueName(queueURL)
}

// queueName turns a queue URL into a queue name. Any scheme and host are
// accepted (clients reach us under many names); the last two path segments
// are the account and the name, and an account other than ours means the
// queue does not exist. A bare queue name is accepted too, as AWS does.
func (h *handler) queueName(s string) (string, error) {
	path := s
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return "", tidemq.NonExistentQueue()
		}
		path = u.Path
	}
	var segs []string
	for seg := range strings.SplitSeq(path, "/") {
		if seg != "" {
			segs = append(segs, seg)
		}
	}
	switch len(segs) {
	case 0:
		return "", tidemq.NonExistentQueue()
	case 1:
		return segs[0], nil
	}
	if segs[len(segs)-2] != h.cfg.AccountID {
		return "", tidemq.NonExistentQueue()
	}
	return segs[len(segs)-1], nil
}
