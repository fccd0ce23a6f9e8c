package topology

import (
	"fmt"
	"strings"
)

// functionCode imports what runs a function's own code: Runtime, Handler
// and CodeUri (SAM, with Globals) or Code (AWS::Lambda::Function, when it
// is a local path as `aws cloudformation package` takes it). Code in S3,
// inline or in a container image is noted and left out: it cannot run
// here.
func (im *importer) functionCode(f *Function, r *resource, prop func(string) (*node, int)) error {
	t := im.t
	str := func(key, field string) (string, error) {
		n, line := prop(key)
		if n == nil {
			return "", nil
		}
		s, err := t.evalString(n)
		if err != nil {
			return "", err
		}
		if s != "" {
			f.setLine(field, line)
		}
		return s, nil
	}
	pt, err := str("PackageType", "")
	if err != nil {
		return err
	}
	if pt == "Image" {
		t.note(fmt.Sprintf("line %d: %s: a container image function cannot run on tidemq (no Docker): give it a url or a command in Metadata.tidemq", r.line, r.id))
		return nil
	}
	if f.Runtime, err = str("Runtime", "runtime"); err != nil {
		return err
	}
	if f.Handler, err = str("Handler", "handler"); err != nil {
		return err
	}
	key := "CodeUri"
	if r.typ == typeFunction {
		key = "Code"
	}
	n, line := prop(key)
	if n == nil {
		return nil
	}
	v, err := t.eval(n)
	if err != nil {
		return err
	}
	s, ok := v.(string)
	switch {
	case !ok || s == "":
		if f.Runtime != "" {
			t.note(fmt.Sprintf("line %d: %s: %s is not a local directory (code in S3 or inline cannot run on tidemq)", line, r.id, key))
		}
	case strings.HasPrefix(s, "s3://"):
		t.note(fmt.Sprintf("line %d: %s: %s %s is in S3: its code cannot run on tidemq", line, r.id, key, s))
	default:
		f.CodeUri = s
		f.buildID = r.id
		f.setLine("codeUri", line)
	}
	return nil
}

// setEnvironment records one of the function's environment variables
// (the function's own override those of SAM's Globals). A value that is
// not a string (a list a condition left, say) is written as the template
// gives it.
func (im *importer) setEnvironment(f *Function, key string, v any, line int) {
	s, err := asString(v)
	if err != nil {
		s = fmt.Sprint(v)
	}
	if _, isNoValue := v.(noValueType); isNoValue {
		return
	}
	if f.Environment == nil {
		f.Environment = map[string]string{}
	}
	f.Environment[key] = s
	f.setLine("environment."+key, line)
}
