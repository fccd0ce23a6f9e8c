package sqs

import (
	"net/url"
	"strings"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/api/awsquery"
	"github.com/tidemq/tidemq/api/sigv4"
)

// baseURL is the scheme and host that the URLs of region's queues start
// with: Config.PublicURL when set ({region} in it replaced by the region),
// otherwise what the client used to reach us.
func (c *call) baseURL(region string) string {
	if c.h.cfg.PublicURL != "" {
		return strings.ReplaceAll(c.h.cfg.PublicURL, "{region}", region)
	}
	return awsquery.BaseURL(c.r)
}

// queueURL is the URL of the named queue (a broker's name, which names
// the queue's region and account unless they are the home ones):
// <base>/<account>/<name>.
func (c *call) queueURL(name string) string {
	region, account, plain := tidemq.SplitQualifiedName(name, c.h.cfg.Region, c.h.cfg.AccountID)
	return c.baseURL(region) + "/" + account + "/" + plain
}

// regional names a queue (or a ListQueues prefix) of the request's region
// and the caller's account for the broker (tidemq.QualifiedQueueName).
func (c *call) regional(name string) string {
	return c.qualified(c.account, name)
}

// qualified names a queue of the request's region and of account for the
// broker.
func (c *call) qualified(account, name string) string {
	return tidemq.QualifiedQueueName(c.region, c.h.cfg.Region, account, c.h.cfg.AccountID, name)
}

// callerAccount is the account of the request's caller: its principal's
// (Config.CallerAccount), else the server's.
func (c *call) callerAccount() string {
	if f := c.h.cfg.CallerAccount; f != nil {
		if a := f(c.accessKey); a != "" {
			return a
		}
	}
	return c.h.cfg.AccountID
}

// requestRegion is the region a request is for: the region of its SigV4
// credential scope (Authorization header or X-Amz-Credential), or the
// default region for an unsigned request. Queues in different regions are
// different queues, as on AWS. A region that is neither the home region
// nor one Config.Regions accepts is refused as AWS refuses a region it
// does not serve.
func (c *call) requestRegion() (string, error) {
	region := sigv4.ScopeRegion(c.r)
	if region == "" {
		return c.h.cfg.Region, nil // unsigned, or an incomplete scope: the authenticator judges it
	}
	if !tidemq.ValidRegion(region) || region != c.h.cfg.Region && !c.h.cfg.Regions(region) {
		return "", tidemq.Errorf(tidemq.ErrSignatureDoesNotMatch, "Credential should be scoped to a valid region, not '%s'.", region)
	}
	return region, nil
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
			queueURL = path
		} else {
			return "", tidemq.MissingParameter("QueueUrl")
		}
	}
	account, name, err := c.h.queueName(queueURL)
	if err != nil {
		return "", err
	}
	if account == "" {
		account = c.account // a bare name: the caller's own queue
	}
	name = c.qualified(account, name)
	// Every action on a queue resolves it here: one place to authorize
	// (a queue of another account than the caller's is a cross-account
	// call, authz decides it so).
	return name, c.authorize(name)
}

// queueName turns a queue URL into an account and a queue name. Any scheme
// and host are accepted (clients reach us under many names); the last two
// path segments are the account and the name, and an account that is not
// 12 digits means the queue does not exist. A bare queue name is accepted
// too, as AWS does: its account is "" (the caller's).
func (h *handler) queueName(s string) (account, name string, err error) {
	path := s
	if i := strings.Index(s, "://"); i >= 0 {
		if strings.ContainsAny(s, "?#%@") { // anything but scheme://host/path: let net/url decide
			u, err := url.Parse(s)
			if err != nil {
				return "", "", tidemq.NonExistentQueue()
			}
			path = u.Path
		} else if j := strings.IndexByte(s[i+3:], '/'); j >= 0 {
			path = s[i+3+j:]
		} else {
			path = ""
		}
	}
	// The last two non-empty segments: account id and queue name.
	last, prev := lastSegment(path)
	if last == "" || strings.Contains(last, ":") {
		return "", "", tidemq.NonExistentQueue()
	}
	account, _ = lastSegment(prev)
	if account != "" && !tidemq.ValidAccount(account) {
		return "", "", tidemq.NonExistentQueue()
	}
	return account, last, nil
}

// lastSegment returns the last non-empty "/"-separated segment of path and
// what comes before it.
func lastSegment(path string) (seg, before string) {
	path = strings.TrimRight(path, "/")
	i := strings.LastIndexByte(path, '/')
	return path[i+1:], path[:max(i, 0)]
}
