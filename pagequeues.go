package tidemq

import (
	"bytes"
	"encoding/base64"
	"sort"
	"unicode/utf8"
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
		last, err := PageAfter(token)
		if err != nil {
			return nil, err
		}
		i := sort.SearchStrings(names, last)
		for i < len(names) && names[i] == last {
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

// PageAfter is the name a page token (PageToken) says the next page starts
// after; a token that does not decode, or decodes to what no queue name
// is (a NUL, bytes that are not UTF-8: no page ended with it), is an
// InvalidParameterValue on NextToken. The bound goes on to the stores as
// is, and PostgreSQL's text cannot hold such bytes: its refusal was a 500
// InternalFailure on GET /tidemq/queues.
func PageAfter(token string) (string, error) {
	last, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || !utf8.Valid(last) || bytes.IndexByte(last, 0) >= 0 {
		return "", InvalidParameter("NextToken", token, "Invalid or expired next token.")
	}
	return string(last), nil
}

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
		last, err := PageAfter(token)
		if err != nil {
			return nil, "", err
		}
		snaps = snapshotsAfter(snaps, last)
	}
	if len(snaps) <= limit {
		return snaps, "", nil
	}
	return snaps[:limit], PageToken(snaps[limit-1].Name), nil
}

// SnapshotPage returns s's SnapshotsAfter(after, n) when s is a
// SnapshotPager, else the same page cut from s.Snapshot() (every queue
// snapshotted for one page).
func SnapshotPage(s Snapshotter, after string, n int) ([]QueueSnapshot, error) {
	if p, ok := s.(SnapshotPager); ok {
		return p.SnapshotsAfter(after, n)
	}
	snaps := snapshotsAfter(s.Snapshot(), after)
	return snaps[:min(max(n, 0), len(snaps))], nil
}

// snapshotsAfter is the snapshots (sorted by name) whose names sort after
// after.
func snapshotsAfter(snaps []QueueSnapshot, after string) []QueueSnapshot {
	return snaps[sort.Search(len(snaps), func(i int) bool { return snaps[i].Name > after }):]
}

// VisitQueues calls f with every queue's snapshot through s's Visit when
// s is a Visitor, else through s.Snapshot() (every queue at once); it
// returns false when s's Visit stopped part way.
func VisitQueues(s Snapshotter, f func(*QueueSnapshot)) bool {
	if v, ok := s.(Visitor); ok {
		return v.Visit(f)
	}
	snaps := s.Snapshot()
	for i := range snaps {
		f(&snaps[i])
	}
	return true
}

// CountQueues returns s's QueueCount when s is a QueueCounter, else the
// length of s.Snapshot().
func CountQueues(s Snapshotter) (int, error) {
	if c, ok := s.(QueueCounter); ok {
		return c.QueueCount()
	}
	return len(s.Snapshot()), nil
}
