package topology

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// node is a YAML (or JSON) value with the line it starts on. CloudFormation
// short-form tags (!Ref X, !GetAtt A.B, !Sub s ...) become the long form
// ({"Ref": X}, {"Fn::GetAtt": [A, B]}, {"Fn::Sub": s}), so one evaluator
// handles both spellings.
type node struct {
	line    int
	kind    nodeKind
	entries []entry // kindMap, in document order
	items   []*node // kindSeq
	str     string  // kindScalar: the scalar's text
	// value is a plain (unquoted) number or boolean scalar's value, nil
	// for strings; it types the scalar when a tidemq.yaml is decoded from
	// the tree.
	value any
	// aliased is set on a document's root when the document uses an
	// alias or a merge key.
	aliased bool
	// size is how many values the node stands for once every alias in it
	// is expanded (itself included): what walking it costs.
	size int
}

type nodeKind int

const (
	kindNull nodeKind = iota
	kindScalar
	kindMap
	kindSeq
)

type entry struct {
	key     string
	keyLine int
	val     *node
}

// get returns the value of key in a map node, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != kindMap {
		return nil
	}
	for _, e := range n.entries {
		if e.key == key {
			return e.val
		}
	}
	return nil
}

// keyLine returns the line of key in a map node, or the node's own line.
func (n *node) keyLine(key string) int {
	if n == nil {
		return 0
	}
	for _, e := range n.entries {
		if e.key == key {
			return e.keyLine
		}
	}
	return n.line
}

// MaxExpandedValues bounds the values a document may stand for once its
// aliases are expanded. An alias shares the anchored value rather than
// copying it, but decoding, evaluating and linting walk the expanded
// document, and a few lines of nested aliases (the "billion laughs")
// expand to billions of values: such a document is rejected instead of
// exhausting memory. A real topology or template is far below it.
const MaxExpandedValues = 1_000_000

// parseTree parses one YAML or JSON document. Anchors, aliases and merge
// keys (<<) are resolved: an alias is the anchored value (with the lines
// where the anchor wrote it), and a merge key adds the entries of the maps
// it names that the map does not set itself. A document that expands to
// more than MaxExpandedValues values is an error.
func parseTree(data []byte) (*node, error) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, err
	}
	if len(f.Docs) == 0 || f.Docs[0].Body == nil {
		return &node{kind: kindMap, line: 1}, nil
	}
	cv := &converter{anchors: map[string]*node{}}
	root, err := cv.convert(f.Docs[0].Body)
	if err != nil {
		return nil, err
	}
	if cv.aliased {
		cp := *root
		cp.aliased = true
		root = &cp
	}
	return root, nil
}

func lineOf(n ast.Node) int {
	if t := n.GetToken(); t != nil && t.Position != nil {
		return t.Position.Line
	}
	return 0
}

// converter turns a YAML AST into nodes, remembering anchors for aliases.
type converter struct {
	anchors map[string]*node
	aliased bool // an alias or merge key was seen
}

// convert converts n and checks the size of what it expands to.
func (cv *converter) convert(n ast.Node) (*node, error) {
	out, err := cv.convertNode(n)
	if err != nil {
		return nil, err
	}
	if out.size == 0 {
		out.size = 1
		for _, e := range out.entries {
			out.size += e.val.size
		}
		for _, it := range out.items {
			out.size += it.size
		}
	}
	if out.size > MaxExpandedValues {
		return nil, fmt.Errorf("line %d: the document expands to more than %d values through its YAML aliases (a \"billion laughs\"?)", lineOf(n), MaxExpandedValues)
	}
	return out, nil
}

func (cv *converter) convertNode(n ast.Node) (*node, error) {
	switch v := n.(type) {
	case nil:
		return &node{kind: kindNull}, nil
	case *ast.NullNode:
		return &node{kind: kindNull, line: lineOf(v)}, nil
	case *ast.MappingNode:
		out := &node{kind: kindMap, line: lineOf(v)}
		var merged []*node
		for _, mv := range v.Values {
			m, err := cv.addEntry(out, mv)
			if err != nil {
				return nil, err
			}
			merged = append(merged, m...)
		}
		mergeInto(out, merged)
		if len(out.entries) > 0 {
			out.line = out.entries[0].keyLine
		}
		return out, nil
	case *ast.MappingValueNode:
		out := &node{kind: kindMap}
		merged, err := cv.addEntry(out, v)
		if err != nil {
			return nil, err
		}
		mergeInto(out, merged)
		if len(out.entries) > 0 {
			out.line = out.entries[0].keyLine
		}
		return out, nil
	case *ast.SequenceNode:
		out := &node{kind: kindSeq, line: lineOf(v)}
		for _, it := range v.Values {
			c, err := cv.convert(it)
			if err != nil {
				return nil, err
			}
			out.items = append(out.items, c)
		}
		return out, nil
	case *ast.TagNode:
		return cv.convertTag(v)
	case *ast.AnchorNode:
		val, err := cv.convert(v.Value)
		if err != nil {
			return nil, err
		}
		cv.anchors[v.Name.GetToken().Value] = val
		return val, nil
	case *ast.AliasNode:
		cv.aliased = true
		name := v.Value.GetToken().Value
		val, ok := cv.anchors[name]
		if !ok {
			return nil, fmt.Errorf("line %d: alias *%s names no anchor defined before it", lineOf(v), name)
		}
		return val, nil
	case *ast.LiteralNode:
		return &node{kind: kindScalar, line: lineOf(v), str: v.Value.Value}, nil
	case *ast.StringNode:
		return &node{kind: kindScalar, line: lineOf(v), str: v.Value}, nil
	case ast.ScalarNode:
		out := &node{kind: kindScalar, line: lineOf(v), str: v.GetToken().Value}
		switch v.Type() {
		case ast.IntegerType, ast.FloatType, ast.BoolType:
			out.value = v.GetValue()
		}
		return out, nil
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node %s", lineOf(n), n.Type())
}

// addEntry adds one key: value to m; for a merge key it returns the maps
// to merge instead.
func (cv *converter) addEntry(m *node, mv *ast.MappingValueNode) ([]*node, error) {
	val, err := cv.convert(mv.Value)
	if err != nil {
		return nil, err
	}
	if _, ok := mv.Key.(*ast.MergeKeyNode); ok {
		cv.aliased = true
		switch val.kind {
		case kindMap:
			return []*node{val}, nil
		case kindSeq:
			for _, it := range val.items {
				if it.kind != kindMap {
					return nil, fmt.Errorf("line %d: a merge key (<<) takes a map or a list of maps", lineOf(mv))
				}
			}
			return val.items, nil
		}
		return nil, fmt.Errorf("line %d: a merge key (<<) takes a map or a list of maps", lineOf(mv))
	}
	k, err := cv.convert(mv.Key)
	if err != nil {
		return nil, err
	}
	if val.line == 0 {
		val.line = k.line
	}
	if m.has(k.str) {
		return nil, fmt.Errorf("line %d: duplicate key %q", k.line, k.str)
	}
	m.entries = append(m.entries, entry{key: k.str, keyLine: k.line, val: val})
	return nil, nil
}

// mergeInto adds the entries of the merged maps that m does not set, the
// earlier map winning, as YAML's merge key does.
func mergeInto(m *node, merged []*node) {
	for _, src := range merged {
		for _, e := range src.entries {
			if !m.has(e.key) {
				m.entries = append(m.entries, e)
			}
		}
	}
}

// has reports whether a map node has key (even with a null value).
func (n *node) has(key string) bool {
	for _, e := range n.entries {
		if e.key == key {
			return true
		}
	}
	return false
}

// convertTag turns a CloudFormation short-form tag into its long form.
func (cv *converter) convertTag(t *ast.TagNode) (*node, error) {
	line := lineOf(t)
	val, err := cv.convert(t.Value)
	if err != nil {
		return nil, err
	}
	tag := strings.TrimPrefix(t.Start.Value, "!")
	var key string
	switch tag {
	case "Ref", "Condition":
		key = tag
	case "GetAtt":
		key = "Fn::GetAtt"
		if val.kind == kindScalar { // !GetAtt Res.Attr (the attribute may itself contain dots)
			res, attr, _ := strings.Cut(val.str, ".")
			val = &node{kind: kindSeq, line: val.line, items: []*node{
				{kind: kindScalar, line: val.line, str: res}, {kind: kindScalar, line: val.line, str: attr}}}
		}
	case "str", "int", "bool", "float", "null", "!str":
		return val, nil
	default:
		key = "Fn::" + tag
	}
	return &node{kind: kindMap, line: line, entries: []entry{{key: key, keyLine: line, val: val}}}, nil
}

// plain renders a node as plain Go values (map[string]any, []any,
// string, numbers, bools, nil). Every key is kept: extension fields ("x-")
// are the decoder's to ignore, and only where they would be fields: in a
// map of tags or headers, an "x-" key is data (x-api-key).
func (n *node) plain() any {
	switch n.kind {
	case kindScalar:
		if n.value != nil {
			return n.value
		}
		return n.str
	case kindMap:
		m := make(map[string]any, len(n.entries))
		for _, e := range n.entries {
			m[e.key] = e.val.plain()
		}
		return m
	case kindSeq:
		l := make([]any, len(n.items))
		for i, it := range n.items {
			l[i] = it.plain()
		}
		return l
	}
	return nil
}

// findKey returns the line of the first map key named key below n, in
// document order, or 0.
func (n *node) findKey(key string) int {
	switch n.kind {
	case kindMap:
		for _, e := range n.entries {
			if e.key == key {
				return e.keyLine
			}
			if l := e.val.findKey(key); l > 0 {
				return l
			}
		}
	case kindSeq:
		for _, it := range n.items {
			if l := it.findKey(key); l > 0 {
				return l
			}
		}
	}
	return 0
}
