package sqs

import (
	"encoding/base64"
	"mime"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tidemq/tidemq"
)

// qnode is the parameters of a Query request seen as a tree: the key
// "SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.DataType" is the
// path SendMessageBatchRequestEntry → 2 → MessageAttribute → 1 → Value →
// DataType. A node holds a value, children, or both. Lists and maps are
// flattened (botocore's query serialiser with the SQS model's locationNames):
// list items and map entries are children numbered from 1.
//
// The tree is never built: the parameters are one slice sorted by name, and
// a node is a view of it, the names under the node's path, which are
// contiguous. So what a request costs is its parameters, however many dots
// their names hold, and nodes exist only for the paths a decoder asks for.
type qnode struct {
	prefix   string   // the node's path and a '.'; "" for the root
	params   []qparam // the parameters whose names start with prefix, sorted
	value    string
	hasValue bool
}

// parseQueryParams collects the parameters of a Query request: the form body
// of a POST (when it is a form, or has no content type) and the URL query
// string. A key given twice keeps its first value, and the body wins over
// the URL. The bounds of limits.go are checked first: the number of
// parameters before anything is decoded, each name before it is.
func parseQueryParams(r *http.Request, body []byte) (*qnode, error) {
	var form, query string
	if len(body) > 0 && isFormBody(r) {
		form = string(body)
	}
	if r.URL != nil {
		query = r.URL.RawQuery
	}
	n := countParams(form, query)
	if n > MaxQueryParams {
		return nil, errTooManyParams()
	}
	params := make([]qparam, 0, n)
	params, err := appendForm(params, form, "The request body")
	if err != nil {
		return nil, err
	}
	if params, err = appendForm(params, query, "The query string"); err != nil {
		return nil, err
	}
	// Stable, so that of equal names the first given comes first and is
	// the one Compact keeps.
	slices.SortStableFunc(params, func(a, b qparam) int { return strings.Compare(a.name, b.name) })
	params = slices.CompactFunc(params, func(a, b qparam) bool { return a.name == b.name })
	return &qnode{params: params}, nil
}

func isFormBody(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/x-www-form-urlencoded"
}

// child returns the child with the given name, or nil. It is safe on a nil node.
func (n *qnode) child(name string) *qnode {
	if n == nil {
		return nil
	}
	path := n.prefix + name
	c := &qnode{prefix: path + "."}
	// n.params is sorted, so the parameter named path, if any, is the first
	// not below it, and the names with c.prefix are one run.
	i, found := slices.BinarySearchFunc(n.params, path, func(p qparam, name string) int { return strings.Compare(p.name, name) })
	if found {
		c.value, c.hasValue = n.params[i].value, true
	}
	rest := n.params[i:]
	lo, _ := slices.BinarySearchFunc(rest, c.prefix, func(p qparam, prefix string) int { return strings.Compare(p.name, prefix) })
	hi := lo + sort.Search(len(rest)-lo, func(j int) bool { return !strings.HasPrefix(rest[lo+j].name, c.prefix) })
	c.params = rest[lo:hi:hi]
	if !c.hasValue && len(c.params) == 0 {
		return nil
	}
	return c
}

// str returns the value of a child, "" when absent.
func (n *qnode) str(name string) string {
	if c := n.child(name); c != nil {
		return c.value
	}
	return ""
}

// has reports whether a child carries a value.
func (n *qnode) has(name string) bool {
	c := n.child(name)
	return c != nil && c.hasValue
}

// int returns an optional integer member; nil when absent.
func (n *qnode) int(name string) (*int, error) {
	if !n.has(name) {
		return nil, nil
	}
	s := n.str(name)
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return nil, tidemq.InvalidParameter(name, s, "Must be an integer.")
	}
	return &v, nil
}

// items returns the numbered children of the flattened list or map called
// name, in index order. Children whose name is not a positive integer are
// not items and are ignored.
func (n *qnode) items(name string) []*qnode {
	list := n.child(name)
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
	out := make([]*qnode, len(found))
	for i, it := range found {
		out[i] = list.child(it.name)
	}
	return out
}

// strList decodes a flattened list of strings: name.1, name.2, ...
func (n *qnode) strList(name string) []string {
	items := n.items(name)
	if len(items) == 0 {
		return nil
	}
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.value
	}
	return out
}

// strMap decodes a flattened map of strings: name.N.<key>, name.N.<value>.
// It returns nil when there are no entries.
func (n *qnode) strMap(name, key, value string) map[string]string {
	items := n.items(name)
	if len(items) == 0 {
		return nil
	}
	out := make(map[string]string, len(items))
	for _, it := range items {
		out[it.str(key)] = it.str(value)
	}
	return out
}

// attrMap decodes a flattened map of message attributes:
// name.N.Name, name.N.Value.DataType, .Value.StringValue, .Value.BinaryValue
// (base64).
func (n *qnode) attrMap(name string) (map[string]attributeValue, error) {
	items := n.items(name)
	if len(items) == 0 {
		return nil, nil
	}
	out := make(map[string]attributeValue, len(items))
	for _, it := range items {
		v := it.child("Value")
		av := attributeValue{DataType: v.str("DataType"), StringValue: exactString(v.str("StringValue"))}
		if v.has("BinaryValue") {
			b, err := base64.StdEncoding.DecodeString(v.str("BinaryValue"))
			if err != nil {
				return nil, tidemq.Errorf(tidemq.ErrInvalidParameterValue,
					"Value for parameter %s.Value.BinaryValue is invalid. Reason: it is not valid base64.", name)
			}
			av.BinaryValue = b
		}
		out[it.str("Name")] = av
	}
	return out, nil
}
