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

// parseTree parses one YAML or JSON document.
func parseTree(data []byte) (*node, error) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, err
	}
	if len(f.Docs) == 0 || f.Docs[0].Body == nil {
		return &node{kind: kindMap, line: 1}, nil
	}
	return convert(f.Docs[0].Body)
}

func lineOf(n ast.Node) int {
	if t := n.GetToken(); t != nil && t.Position != nil {
		return t.Position.Line
	}
	return 0
}

func convert(n ast.Node) (*node, error) {
	switch v := n.(type) {
	case nil:
		return &node{kind: kindNull}, nil
	case *ast.NullNode:
		return &node{kind: kindNull, line: lineOf(v)}, nil
	case *ast.MappingNode:
		out := &node{kind: kindMap, line: lineOf(v)}
		for _, mv := range v.Values {
			if err := addEntry(out, mv); err != nil {
				return nil, err
			}
		}
		if len(out.entries) > 0 {
			out.line = out.entries[0].keyLine
		}
		return out, nil
	case *ast.MappingValueNode:
		out := &node{kind: kindMap}
		if err := addEntry(out, v); err != nil {
			return nil, err
		}
		out.line = out.entries[0].keyLine
		return out, nil
	case *ast.SequenceNode:
		out := &node{kind: kindSeq, line: lineOf(v)}
		for _, it := range v.Values {
			c, err := convert(it)
			if err != nil {
				return nil, err
			}
			out.items = append(out.items, c)
		}
		return out, nil
	case *ast.TagNode:
		return convertTag(v)
	case *ast.AnchorNode:
		return convert(v.Value)
	case *ast.AliasNode:
		return nil, fmt.Errorf("line %d: YAML aliases are not supported", lineOf(v))
	case *ast.LiteralNode:
		return &node{kind: kindScalar, line: lineOf(v), str: v.Value.Value}, nil
	case *ast.StringNode:
		return &node{kind: kindScalar, line: lineOf(v), str: v.Value}, nil
	case ast.ScalarNode:
		return &node{kind: kindScalar, line: lineOf(v), str: v.GetToken().Value}, nil
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node %s", lineOf(n), n.Type())
}

func addEntry(m *node, mv *ast.MappingValueNode) error {
	if _, ok := mv.Key.(*ast.MergeKeyNode); ok {
		return fmt.Errorf("line %d: YAML merge keys are not supported", lineOf(mv))
	}
	k, err := convert(mv.Key)
	if err != nil {
		return err
	}
	val, err := convert(mv.Value)
	if err != nil {
		return err
	}
	if val.line == 0 {
		val.line = k.line
	}
	m.entries = append(m.entries, entry{key: k.str, keyLine: k.line, val: val})
	return nil
}

// convertTag turns a CloudFormation short-form tag into its long form.
func convertTag(t *ast.TagNode) (*node, error) {
	line := lineOf(t)
	val, err := convert(t.Value)
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
