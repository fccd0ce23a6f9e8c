package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/tidemq/tidemq/topology"
)

// noLintUsage is the help of --no-lint, the flag of 'apply' and 'serve'
// that skips the lint before applying a topology.
const noLintUsage = "apply without linting first (by default an error finding stops before anything changes; warnings are printed and do not stop; --suppress silences one finding instead)"

// suppressUsage is the help of --suppress, on 'lint' and 'apply'.
const suppressUsage = "suppress a lint rule (id or name), for one resource with RULE:RESOURCE (its logical id); repeatable. The finding is shown as suppressed and does not count"

// addSuppressions adds the --suppress flags to c.
func addSuppressions(c *topology.Config, flags []string) error {
	for _, s := range flags {
		sup, err := topology.ParseSuppression(s)
		if err != nil {
			return err
		}
		c.Suppress(sup)
	}
	return nil
}

// lintBeforeApply is the check 'tidemq apply' and 'tidemq serve --config'
// make before they change anything: it lints c and hands every error and
// warning to report; it fails when there is an error finding. Info
// findings are only counted: 'tidemq lint' shows them.
//
// A suppressed finding (see topology.Suppression) is reported as such and
// counted with the notes.
func lintBeforeApply(c *topology.Config, report func(topology.Finding)) (warnings, notes int, err error) {
	errs := 0
	for _, f := range topology.Lint(c) {
		switch {
		case f.Suppressed != nil:
			notes++
			report(f)
		case f.Severity == topology.SeverityError:
			errs++
			report(f)
		case f.Severity == topology.SeverityWarning:
			warnings++
			report(f)
		default:
			notes++
		}
	}
	if errs > 0 {
		return warnings, notes, fmt.Errorf("%s: lint found %d error(s), so nothing was applied: fix them ('tidemq lint %s' explains each), suppress one that does not apply (Metadata.tidemq.suppress in a template, lint.suppress in a tidemq.yaml, or --suppress RULE:RESOURCE), or skip every check with --no-lint",
			c.File, errs, c.File)
	}
	return warnings, notes, nil
}

// lintSummary is the line 'tidemq apply' prints after a lint that found
// warnings or notes but no error; it points to 'tidemq lint' only when
// there are notes it did not print.
func lintSummary(warnings, notes int, file string) string {
	s := fmt.Sprintf("lint: %d warnings, %d notes", warnings, notes)
	if notes > 0 {
		s += fmt.Sprintf(" ('tidemq lint %s' shows the notes)", file)
	}
	return s + "; applying"
}

// printFindings is lintBeforeApply's report for a command: each finding
// as 'tidemq lint' writes it.
func printFindings(w io.Writer) func(topology.Finding) {
	return func(f topology.Finding) { fmt.Fprintln(w, f) }
}

// logFindings is lintBeforeApply's report for the server: one log record
// per finding, at the level of its severity.
func logFindings(log *slog.Logger) func(topology.Finding) {
	return func(f topology.Finding) {
		level := slog.LevelWarn
		if f.Severity == topology.SeverityError {
			level = slog.LevelError
		}
		log.Log(context.Background(), level, "config: lint "+string(f.Severity), "file", f.File, "line", f.Line, "resource", f.Resource,
			"rule", f.Rule+" ("+f.Name+")", "finding", f.Message, "fix", f.Hint)
	}
}
