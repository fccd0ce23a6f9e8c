package tidemq

import (
	"encoding/base64"
	"sort"
)

// PageQueueNames sorts names (in place) and cuts the page of ListQueues or
// ListDeadLetterSourceQueues that follows token. The token is the last name
// of the previous page, base64-encoded (unpadded, URL alphabet); a token that
// does not decode is an InvalidParameterValue on NextToken. maxResults nil
// means no paging: at most MaxListQueuesResults names and no NextToken.
// Every broker pages through this one function, so tokens are the same
// whichever broker issued them.
func PageQueueNames(names []string, maxResults *int, token string) (*ListQueuesResult, error) {
	sort.Strings(names)
	if token != "" {
		last, err := base64.RawURLEncoding.DecodeString(token)
		if err != nil {
			return nil, InvalidParameter("NextToken", token, "Invalid or expired next token.")
		}
		i := sort.SearchStrings(names, string(last))
		for i < len(names) && names[i] == string(last) {
			i++
		}
		names = names[i:]
	}
	res := &ListQueuesResult{Names: names}
	if maxResults == nil {
		if len(names) > MaxListQueuesResults {
			res.Names = names[:MaxListQueuesResults]
		}
		return res, nil
	}
	if max := *maxResults; len(names) > max {
		res.Names = names[:max]
		res.NextToken = PageToken(names[max-1])
	}
	return res, nil
}

// PageToken is the NextToken of a page of queue names that ends with last.
func PageToken(last string) string { return base64.RawURLEncoding.EncodeToString([]byte(last)) }

// SnapshotPageSize and MaxSnapshotPageSize are the default and largest
// page of GET /tidemq/queues.
const (
	SnapshotPageSize    = 1000
	MaxSnapshotPageSize = 10000
)

// PageSnapshots cuts the page of snapshots (sorted by name, as
// Snapshotter returns them) that follows token, with at most limit
// queues, and the token of the next page ("" after the last). The token
// is the one of PageQueueNames: the last name of the previous page,
// base64-encoded (unpadded, URL alphabet).
func PageSnapshots(snaps []QueueSnapshot, limit int, token string) ([]QueueSnapshot, string, error) {
	if token != "" {
		last, err := base64.RawURLEncoding.DecodeString(token)
		if err != nil {
			return nil, "", InvalidParameter("NextToken", token, "Invalid or expired next token.")
		}
		i := sort.Search(len(snaps), func(i int) bool { return snaps[i].Name > string(last) })
		snaps = snaps[i:]
	}
	if len(snaps) <= limit {
		return snaps, "", nil
	}
	return snaps[:limit], base64.RawURLEncoding.EncodeToString([]byte(snaps[limit-1].Name)), nil
}
