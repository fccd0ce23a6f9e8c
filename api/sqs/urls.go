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
// the queue's region unless it is the home region): <base>/<account>/<name>.
func (c *call) queueURL(name string) string {
	region, plain := tidemq.SplitQueueName(name, c.h.cfg.Region)
	return c.baseURL(region) + "/" + c.h.cfg.AccountID + "/" + plain
}

// regional names a queue (or a ListQueues prefix) of the request's region
// for the broker (tidemq.RegionalQueueName).
func (c *call) regional(name string) string {
	return tidemq.RegionalQueueName(c.region, c.h.cfg.Region, name)
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
	name, err := c.h.queueName(queueURL)
	if err != nil {
		return "", err
	}
	name = c.regional(name)
	// Every action on a queue resolves it here: one place to authorize.
	return name, c.authorize(name)
}

// queueName turns a queue URL into a queue name. Any scheme and host are
// accepted (clients reach us under many names); the last two path segments
// are the account and the name, and an account other than ours means the
// queue does not exist. A bare queue name is accepted too, as AWS does.
func (h *handler) queueName(s string) (string, error) {
	path := s
	if i := strings.Index(s, "://"); i >= 0 {
		if strings.ContainsAny(s, "?#%@") { // anything but scheme://host/path: let net/url decide
			u, err := url.Parse(s)
			if err != nil {
				return "", tidemq.NonExistentQueue()
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
	if last == "" {
		return "", tidemq.NonExistentQueue()
	}
	account, _ := lastSegment(prev)
	if account == "" {
		return last, nil
	}
	if account != h.cfg.AccountID {
		return "", tidemq.NonExistentQueue()
	}
	return last, nil
}

// lastSegment returns the last non-empty "/"-separated segment of path and
// what comes before it.
func lastSegment(path string) (seg, before string) {
	path = strings.TrimRight(path, "/")
	i := strings.LastIndexByte(path, '/')
	return path[i+1:], path[:max(i, 0)]
}
