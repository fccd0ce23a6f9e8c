package topology

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
)

// WriteFindings writes findings as text, json or sarif (SARIF 2.1.0).
func WriteFindings(w io.Writer, format string, fs []Finding) error {
	switch format {
	case "text", "":
		for _, f := range fs {
			fmt.Fprintln(w, f)
		}
		n := Count(fs)
		line := fmt.Sprintf("%d errors, %d warnings, %d notes", n.Errors, n.Warnings, n.Notes)
		if n.Suppressed > 0 {
			line += fmt.Sprintf(", %d suppressed", n.Suppressed)
		}
		_, err := fmt.Fprintln(w, line)
		return err
	case "json":
		if fs == nil {
			fs = []Finding{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(fs)
	case "sarif":
		return writeSARIF(w, fs)
	}
	return fmt.Errorf("unknown format %q: use text, json or sarif", format)
}

func writeSARIF(w io.Writer, fs []Finding) error {
	type msg struct {
		Text string `json:"text"`
	}
	type rule struct {
		ID               string `json:"id"`
		Name             string `json:"name"`
		ShortDescription msg    `json:"shortDescription"`
	}
	type region struct {
		StartLine int `json:"startLine"`
	}
	type artifact struct {
		URI string `json:"uri"`
	}
	type physical struct {
		ArtifactLocation artifact `json:"artifactLocation"`
		Region           region   `json:"region"`
	}
	// logical is a SARIF logicalLocation: the template resource (or
	// tidemq.yaml element) a finding is about, by its logical id.
	type logical struct {
		Name               string `json:"name"`
		FullyQualifiedName string `json:"fullyQualifiedName"`
		Kind               string `json:"kind"`
	}
	type location struct {
		PhysicalLocation physical  `json:"physicalLocation"`
		LogicalLocations []logical `json:"logicalLocations,omitempty"`
	}
	// suppression is a SARIF suppression: inSource when the file says
	// so (template Metadata, tidemq.yaml lint.suppress), external when
	// the command line does.
	type suppression struct {
		Kind          string `json:"kind"`
		Justification string `json:"justification,omitempty"`
	}
	type result struct {
		RuleID       string        `json:"ruleId"`
		Level        string        `json:"level"`
		Message      msg           `json:"message"`
		Locations    []location    `json:"locations"`
		Suppressions []suppression `json:"suppressions,omitempty"`
	}
	var rules []rule
	for _, r := range Rules {
		rules = append(rules, rule{ID: r.ID, Name: r.Name, ShortDescription: msg{r.Description}})
	}
	results := []result{}
	for _, f := range fs {
		level := map[Severity]string{SeverityError: "error", SeverityWarning: "warning", SeverityInfo: "note"}[f.Severity]
		text := f.Message
		if f.Resource != "" {
			// Viewers show the message, not always the logical
			// location: name the resource in both.
			text = f.Resource + ": " + text
		}
		if f.Hint != "" {
			text += " Fix: " + f.Hint
		}
		line := f.Line
		if line < 1 {
			line = 1
		}
		loc := location{PhysicalLocation: physical{artifact{sarifURI(f.File)}, region{line}}}
		if f.Resource != "" {
			loc.LogicalLocations = []logical{{Name: f.Resource, FullyQualifiedName: f.Resource, Kind: "resource"}}
		}
		r := result{RuleID: f.Rule, Level: level, Message: msg{text}, Locations: []location{loc}}
		if sp := f.Suppressed; sp != nil {
			kind := "inSource"
			if sp.Source == SuppressedOnCommand {
				kind = "external"
			}
			r.Suppressions = []suppression{{Kind: kind, Justification: sp.Reason}}
		}
		results = append(results, r)
	}
	doc := map[string]any{
		"$schema": "https://json.schemastore.org/sarif-2.1.0.json",
		"version": "2.1.0",
		"runs": []any{map[string]any{
			"tool":    map[string]any{"driver": map[string]any{"name": "tidemq lint", "informationUri": "https://github.com/tidemq/tidemq", "rules": rules}},
			"results": results,
		}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// sarifURI turns a finding's file into what SARIF's artifactLocation.uri
// must be, a URI reference (RFC 3986): a relative path becomes a relative
// reference with forward slashes, an absolute path a file:// URI; either
// is percent-encoded where it must be (a space, %, #, ?). A relative path
// whose first segment holds a colon gets "./", so that it is not read as
// a scheme.
func sarifURI(file string) string {
	if file == "" {
		return ""
	}
	p := filepath.ToSlash(file)
	if filepath.IsAbs(file) {
		if p[0] != '/' { // a Windows drive, C:/x → file:///C:/x
			p = "/" + p
		}
		return (&url.URL{Scheme: "file", Path: p}).String()
	}
	return (&url.URL{Path: p}).String()
}
