package sqs

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/api/awsquery"
)

// qnode is an awsquery.Node, the parameters of a Query request seen as a
// tree, under the names the decoders of query_inputs.go use. Lists and
// maps are flattened (botocore's query serialiser with the SQS model's
// locationNames): list items and map entries are children numbered from 1.
type qnode awsquery.Node

// parseQueryParams collects the parameters of a Query request with
// awsquery's bounded parser (the body wins over the URL, a key given twice
// keeps its first value).
func parseQueryParams(r *http.Request, body []byte) (*qnode, error) {
	n, err := queryService.Parse(r, body)
	return (*qnode)(n), err
}

func (n *qnode) node() *awsquery.Node { return (*awsquery.Node)(n) }

// child returns the child with the given name, or nil. It is safe on a nil node.
func (n *qnode) child(name string) *qnode { return (*qnode)(n.node().Child(name)) }

// str returns the value of a child, "" when absent.
func (n *qnode) str(name string) string { return n.node().Str(name) }

// has reports whether a child carries a value.
func (n *qnode) has(name string) bool { return n.node().Has(name) }

// items returns the numbered children of the flattened list or map called
// name, in index order.
func (n *qnode) items(name string) []*qnode {
	items := n.node().Items(name)
	if len(items) == 0 {
		return nil
	}
	out := make([]*qnode, len(items))
	for i, it := range items {
		out[i] = (*qnode)(it)
	}
	return out
}

// strList decodes a flattened list of strings: name.1, name.2, ...
func (n *qnode) strList(name string) []string { return n.node().StrList(name) }

// strMap decodes a flattened map of strings: name.N.<key>, name.N.<value>.
// It returns nil when there are no entries.
func (n *qnode) strMap(name, key, value string) map[string]string {
	return n.node().StrMap(name, key, value)
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
