package sqs

import (
	"encoding/base64"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/tidemq/tidemq"
)

// qnode is the parameters of a Query request as a tree: the key
// "SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.DataType" is the
// path SendMessageBatchRequestEntry → 2 → MessageAttribute → 1 → Value →
// DataType. A node holds a value, children, or both. Lists and maps are
// flattened (botocore's query serialiser with the SQS model's locationNames):
// list items and map entries are children numbered from 1.
type qnode struct {
	value    string
	hasValue bool
	children map[string]*qnode
}

// parseQueryParams collects the parameters of a Query request: the form body
// of a POST (when it is a form, or has no content type) and the URL query
// string. A key given twice keeps its first value, and the body wins over
// the URL.
func parseQueryParams(r *http.Request, body []byte) (*qnode, error) {
	root := &qnode{}
	if len(body) > 0 && isFormBody(r) {
		values, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, tidemq.Errorf(tidemq.ErrMalformedInput, "The request body is not a valid form: %v", err)
		}
		root.addValues(values)
	}
	if r.URL != nil && r.URL.RawQuery != "" {
		values, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			return nil, tidemq.Errorf(tidemq.ErrMalformedInput, "The query string is malformed: %v", err)
		}
		root.addValues(values)
	}
	return root, nil
}

func isFormBody(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/x-www-form-urlencoded"
}

// addValues adds parameters to the tree; keys already present are kept.
func (n *qnode) addValues(values url.Values) {
	for key, vs := range values {
		if len(vs) == 0 {
			continue
		}
		node := n
		for part := range strings.SplitSeq(key, ".") {
			child := node.children[part]
			if child == nil {
				if node.children == nil {
					node.children = make(map[string]*qnode)
				}
				child = &qnode{}
				node.children[part] = child
			}
			node = child
		}
		if !node.hasValue {
			node.value, node.hasValue = vs[0], true
		}
	}
}

// child returns the child with the given name, or nil. It is safe on a nil node.
func (n *qnode) child(name string) *qnode {
	if n == nil {
		return nil
	}
	return n.children[name]
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
	if list == nil || len(list.children) == 0 {
		return nil
	}
	type item struct {
		index int
		node  *qnode
	}
	found := make([]item, 0, len(list.children))
	for k, c := range list.children {
		i, err := strconv.Atoi(k)
		if err != nil || i < 1 || strings.HasPrefix(k, "+") {
			continue
		}
		found = append(found, item{i, c})
	}
	sort.Slice(found, func(a, b int) bool { return found[a].index < found[b].index })
	out := make([]*qnode, len(found))
	for i, it := range found {
		out[i] = it.node
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
		av := attributeValue{DataType: v.str("DataType"), StringValue: v.str("StringValue")}
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
