package awsquery

import (
	"mime"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Node is the parameters of a Query request seen as a tree: the key
// "SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.DataType" is the
// path SendMessageBatchRequestEntry → 2 → MessageAttribute → 1 → Value →
// DataType. A node holds a value, children, or both. Lists and maps are
// numbered children, from 1: SQS flattens them (Attribute.N.Name), SNS
// wraps them ("Tags.member.N.Key", "Attributes.entry.N.key"), and either
// way the items are the Items of one node.
//
// The tree is never built: the parameters are one slice sorted by name, and
// a node is a view of it, the names under the node's path, which are
// contiguous. So what a request costs is its parameters, however many dots
// their names hold, and nodes exist only for the paths a decoder asks for.
//
// Every method is safe on a nil *Node, which stands for an absent one.
type Node struct {
	prefix   string  // the node's path and a '.'; "" for the root
	params   []param // the parameters whose names start with prefix, sorted
	value    string
	hasValue bool
}

// Parse collects the parameters of a Query request: the form body of a
// POST (when it is a form, or has no content type) and the URL query
// string. A key given twice keeps its first value, and the body wins over
// the URL. The bounds of limits.go are checked first: the number of
// parameters before anything is decoded, each name before it is. A value
// that is not UTF-8 fails the request unless s.KeepValue keeps it.
func (s *Service) Parse(r *http.Request, body []byte) (*Node, error) {
	var form, query string
	if len(body) > 0 && isFormBody(r) {
		form = string(body)
	}
	if r.URL != nil {
		query = r.URL.RawQuery
	}
	n := countParams(form, query)
	if n > MaxParams {
		return nil, errTooManyParams()
	}
	params := make([]param, 0, n)
	params, err := s.appendForm(params, form, FromBody)
	if err != nil {
		return nil, err
	}
	if params, err = s.appendForm(params, query, FromURL); err != nil {
		return nil, err
	}
	// Stable, so that of equal names the first given comes first and is
	// the one Compact keeps.
	slices.SortStableFunc(params, func(a, b param) int { return strings.Compare(a.name, b.name) })
	params = slices.CompactFunc(params, func(a, b param) bool { return a.name == b.name })
	return &Node{params: params}, nil
}

func isFormBody(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/x-www-form-urlencoded"
}

// Child returns the child with the given name, or nil.
func (n *Node) Child(name string) *Node {
	if n == nil {
		return nil
	}
	path := n.prefix + name
	c := &Node{prefix: path + "."}
	// n.params is sorted, so the parameter named path, if any, is the first
	// not below it, and the names with c.prefix are one run.
	i, found := slices.BinarySearchFunc(n.params, path, func(p param, name string) int { return strings.Compare(p.name, name) })
	if found {
		c.value, c.hasValue = n.params[i].value, true
	}
	rest := n.params[i:]
	lo, _ := slices.BinarySearchFunc(rest, c.prefix, func(p param, prefix string) int { return strings.Compare(p.name, prefix) })
	hi := lo + sort.Search(len(rest)-lo, func(j int) bool { return !strings.HasPrefix(rest[lo+j].name, c.prefix) })
	c.params = rest[lo:hi:hi]
	if !c.hasValue && len(c.params) == 0 {
		return nil
	}
	return c
}

// Value returns the node's own value, "" when it has none.
func (n *Node) Value() string {
	if n == nil {
		return ""
	}
	return n.value
}

// Str returns the value of a child, "" when absent.
func (n *Node) Str(name string) string { return n.Child(name).Value() }

// Has reports whether a child carries a value.
func (n *Node) Has(name string) bool {
	c := n.Child(name)
	return c != nil && c.hasValue
}

// Items returns the numbered children of the list or map called name, in
// index order. Children whose name is not a positive integer are not items
// and are ignored.
func (n *Node) Items(name string) []*Node {
	list := n.Child(name)
	if list == nil || len(list.params) == 0 {
		return nil
	}
	type item struct {
		index int
		name  string
	}
	var found []item
	for _, p := range list.params {
		k, _, _ := strings.Cut(p.name[len(list.prefix):], ".")
		i, err := strconv.Atoi(k)
		if err != nil || i < 1 || strings.HasPrefix(k, "+") {
			continue
		}
		found = append(found, item{i, k})
	}
	// Every parameter under an item named its index once, and an item's
	// parameters need not be adjacent ("1", "1-x", "1.Id" sort in that
	// order), so the indexes are sorted and made unique here.
	slices.SortFunc(found, func(a, b item) int {
		if a.index != b.index {
			return a.index - b.index
		}
		return strings.Compare(a.name, b.name)
	})
	found = slices.Compact(found)
	out := make([]*Node, len(found))
	for i, it := range found {
		out[i] = list.Child(it.name)
	}
	return out
}

// StrList decodes a list of strings: name.1, name.2, ... It returns nil
// when there are no items.
func (n *Node) StrList(name string) []string {
	items := n.Items(name)
	if len(items) == 0 {
		return nil
	}
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.value
	}
	return out
}

// StrMap decodes a map of strings: name.N.<key>, name.N.<value>. It
// returns nil when there are no entries.
func (n *Node) StrMap(name, key, value string) map[string]string {
	items := n.Items(name)
	if len(items) == 0 {
		return nil
	}
	out := make(map[string]string, len(items))
	for _, it := range items {
		out[it.Str(key)] = it.Str(value)
	}
	return out
}
