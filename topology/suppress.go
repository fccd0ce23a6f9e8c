package topology

import (
	"fmt"
	"strings"
)

// Suppression silences one lint rule, for one resource or for all. A
// suppressed finding is still reported, marked as suppressed with its
// reason (text, JSON "suppressed", SARIF "suppressions"), and no longer
// counts: an error finding that is suppressed neither fails 'tidemq lint'
// nor stops 'tidemq apply'. Unlike --no-lint, every other check still runs.
//
// Suppressions come from three places: a template resource's Metadata
// (which AWS ignores), for the findings about that resource and its SAM
// events; a tidemq.yaml's lint.suppress, each naming its resource by its
// key (queues[orders]), or every resource when it names none; and the
// command line, --suppress RULE[:RESOURCE]. In a template:
//
//	EnrichmentPipelineQueue:
//	  Type: AWS::SQS::Queue
//	  Metadata:
//	    tidemq:
//	      suppress:
//	        - rule: TQ005
//	          reason: the scorer's event source is off until the model is retrained
//
// Rule is a rule id (TQ005) or name (unconsumed-queue). A suppression in a
// file must give its reason.
type Suppression struct {
	Rule     string `yaml:"rule" json:"rule"`
	Resource string `yaml:"resource,omitempty" json:"resource,omitempty"`
	Reason   string `yaml:"reason,omitempty" json:"reason,omitempty"`
	// Source says where it was given: "template", "config" or
	// "command line".
	Source string `yaml:"-" json:"source"`
	Line   int    `yaml:"-" json:"line,omitempty"`
}

// Suppression sources.
const (
	SuppressedInTemplate = "template"
	SuppressedInConfig   = "config"
	SuppressedOnCommand  = "command line"
)

// LintSettings is the lint section of a tidemq.yaml.
type LintSettings struct {
	Suppress []Suppression `yaml:"suppress,omitempty" json:"suppress,omitempty"`
}

// ruleID returns the id of a rule given by id or name ("" if unknown).
func ruleID(s string) string {
	for _, r := range Rules {
		if strings.EqualFold(r.ID, s) || r.Name == s {
			return r.ID
		}
	}
	return ""
}

// ParseSuppression reads a --suppress value: RULE or RULE:RESOURCE.
func ParseSuppression(s string) (Suppression, error) {
	rule, res, _ := strings.Cut(s, ":")
	id := ruleID(strings.TrimSpace(rule))
	if id == "" {
		return Suppression{}, fmt.Errorf("--suppress %s: unknown rule %q (see 'tidemq lint --help': TQ001…TQ%03d, or a rule's name)", s, rule, len(Rules))
	}
	return Suppression{Rule: id, Resource: strings.TrimSpace(res), Reason: "--suppress " + s, Source: SuppressedOnCommand}, nil
}

// Suppress adds suppressions (from the command line) to c.
func (c *Config) Suppress(s ...Suppression) {
	if c.Lint == nil {
		c.Lint = &LintSettings{}
	}
	c.Lint.Suppress = append(c.Lint.Suppress, s...)
}

// checkSuppressions reports suppressions that cannot work: an unknown
// rule, or no reason in a file.
func (l *linter) checkSuppressions() {
	if l.c.Lint == nil {
		return
	}
	for i := range l.c.Lint.Suppress {
		s := &l.c.Lint.Suppress[i]
		where := fmt.Sprintf("suppression of %s", s.Rule)
		if s.Resource != "" {
			where += " for " + s.Resource
		}
		if id := ruleID(s.Rule); id == "" {
			l.findings = append(l.findings, Finding{File: l.c.File, Line: s.Line, Resource: s.Resource, Rule: RuleInvalidConfiguration,
				Name: ruleName(RuleInvalidConfiguration), Severity: SeverityError, Hint: "name a rule by its id (TQ005) or name (unconsumed-queue); 'tidemq lint --help' lists them",
				Message: fmt.Sprintf("%s: unknown rule %q", where, s.Rule)})
		} else {
			s.Rule = id
		}
		if strings.TrimSpace(s.Reason) == "" && s.Source != SuppressedOnCommand {
			l.findings = append(l.findings, Finding{File: l.c.File, Line: s.Line, Resource: s.Resource, Rule: RuleInvalidConfiguration,
				Name: ruleName(RuleInvalidConfiguration), Severity: SeverityError, Hint: "say why the finding does not apply, in reason:",
				Message: where + " gives no reason"})
		}
	}
}

// suppress marks the findings a suppression matches. A suppression for
// a resource matches the findings about it and its parts (a SAM
// function's events: Fn.Events.Queue).
func (l *linter) suppress() {
	if l.c.Lint == nil {
		return
	}
	for i := range l.findings {
		f := &l.findings[i]
		for j := range l.c.Lint.Suppress {
			s := &l.c.Lint.Suppress[j]
			if s.Rule != f.Rule || f.Rule == RuleInvalidConfiguration && strings.HasPrefix(f.Message, "suppression of ") {
				continue
			}
			if s.Resource == "" || s.Resource == f.Resource || strings.HasPrefix(f.Resource, s.Resource+".") {
				sup := *s
				f.Suppressed = &sup
				break
			}
		}
	}
}

// Counts are the findings by severity; suppressed ones are counted apart.
type Counts struct {
	Errors, Warnings, Notes, Suppressed int
}

// Count counts findings.
func Count(fs []Finding) Counts {
	var c Counts
	for _, f := range fs {
		switch {
		case f.Suppressed != nil:
			c.Suppressed++
		case f.Severity == SeverityError:
			c.Errors++
		case f.Severity == SeverityWarning:
			c.Warnings++
		default:
			c.Notes++
		}
	}
	return c
}

// suppressions reads the lint suppressions of every resource's Metadata
// (Metadata.tidemq.suppress: a list of {rule, reason}), each for that
// resource.
func (t *template) suppressions(c *Config) error {
	for _, id := range t.ids {
		r := t.resources[id]
		n := r.node.get("Metadata").get("tidemq").get("suppress")
		if n == nil {
			continue
		}
		if n.kind != kindSeq {
			return fmt.Errorf("%s: line %d: Metadata.tidemq.suppress must be a list of {rule, reason}", id, n.line)
		}
		for _, it := range n.items {
			if it.kind != kindMap {
				return fmt.Errorf("%s: line %d: Metadata.tidemq.suppress: each entry is a map {rule, reason}", id, it.line)
			}
			s := Suppression{Resource: id, Source: SuppressedInTemplate, Line: it.line}
			for _, e := range it.entries {
				v, err := t.evalString(e.val)
				if err != nil {
					return fmt.Errorf("%s: line %d: Metadata.tidemq.suppress.%s: %w", id, e.keyLine, e.key, err)
				}
				switch e.key {
				case "rule":
					s.Rule = v
				case "reason":
					s.Reason = v
				default:
					return fmt.Errorf("%s: line %d: Metadata.tidemq.suppress: unknown key %s (rule, reason)", id, e.keyLine, e.key)
				}
			}
			c.Suppress(s)
		}
	}
	return nil
}
