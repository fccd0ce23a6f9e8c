package placement

import (
	"context"

	"github.com/tidemq/tidemq"
)

// ListQueues lists every cluster's queues as one list, paged as one
// broker pages it (tidemq.PageQueueNames: a token is the last name of the
// previous page, the same on every cluster).
//
// Each cluster is asked for the page after the token. A cluster that
// answers with a NextToken may hold names after its last one that were not
// returned, so the merged page stops at the smallest such last name: no
// name is skipped, and a later page asks again from there.
func (r *Router) ListQueues(ctx context.Context, p tidemq.ListQueuesParams) (*tidemq.ListQueuesResult, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	var names []string
	bound, bounded := "", false
	for _, c := range r.clusters {
		res, err := c.Broker.ListQueues(ctx, p)
		if err != nil {
			return nil, err
		}
		names = append(names, res.Names...)
		if n := len(res.Names); n > 0 && (res.NextToken != "" || p.MaxResults == nil && n >= tidemq.MaxListQueuesResults) {
			if last := res.Names[n-1]; !bounded || last < bound {
				bound, bounded = last, true
			}
		}
	}
	kept := names[:0]
	for _, n := range names {
		if !bounded || n <= bound {
			kept = append(kept, n)
		}
	}
	out, err := tidemq.PageQueueNames(kept, p.MaxResults, "")
	if err != nil {
		return nil, err
	}
	if bounded && out.NextToken == "" && p.MaxResults != nil {
		// The page ends at the bound, and names after it may exist.
		out.NextToken = tidemq.PageToken(out.Names[len(out.Names)-1])
	}
	return out, nil
}
