package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/authz"
	"github.com/tidemq/tidemq/topology"
)

// templateOptions are the pseudo parameters and parameters used when a
// command reads a CloudFormation/SAM template.
type templateOptions struct {
	accountID string
	stackName string
	params    []string
}

func (o *templateOptions) register(f *pflag.FlagSet) {
	f.StringVar(&o.accountID, "account-id", tidemq.DefaultAccountID, "AWS::AccountId when reading a template")
	f.StringVar(&o.stackName, "stack-name", "stack", "AWS::StackName when reading a template")
	f.StringArrayVar(&o.params, "param", nil, "template parameter as NAME=VALUE (repeatable; overrides its default)")
}

func (o *templateOptions) importOptions(region string) (topology.ImportOptions, error) {
	params, err := parseParams("--param", o.params)
	return topology.ImportOptions{Region: region, AccountID: o.accountID, StackName: o.stackName, Parameters: params, ParamFlag: "--param"}, err
}

// parseParams reads template parameters given as NAME=VALUE with flag
// (the value may hold "=" and ","); a later one wins.
func parseParams(flag string, ps []string) (map[string]string, error) {
	params := map[string]string{}
	for _, p := range ps {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return params, fmt.Errorf("%s wants NAME=VALUE, not %q", flag, p)
		}
		params[k] = v
	}
	return params, nil
}

func newLintCommand() *cobra.Command {
	var (
		format string
		schema bool
		region string
		tmpl   templateOptions
		supp   []string
		creds  string
	)
	cmd := &cobra.Command{
		Use:   "lint FILE",
		Short: "Check a tidemq.yaml or a CloudFormation/SAM template for queue misconfigurations",
		Long: `Check a topology — a tidemq.yaml, or a CloudFormation/SAM template (YAML with
short-form tags, or JSON) — for the mistakes that lose or duplicate messages:
visibility timeouts too close to consumer timeouts, batches without
ReportBatchItemFailures, dead-letter queues of the wrong type, too short or
without alarms, queues without DLQs, queues that are produced to but that no
enabled event source reads (a dead-letter queue sent to directly is only
noted), FIFO head-of-line stalls (noted from 3 minutes, a warning above 15),
event-source limits, and the topic and subscription settings SNS refuses
(http/https on a FIFO topic, FIFO-only attributes on a standard topic, queue
or dead-letter queue types that do not match the topic).

With --credentials-file (the permissions file of 'serve --auth'), lint also
decides, as the server would, who may do what: a function whose principal
(functions[].principal) may not consume its queue or send where it produces
(TQ019), a subscription whose queue's policy refuses the topic (TQ020: under
--auth nothing would be delivered), a dead-letter queue no principal may
redrive (TQ021), a queue or topic policy the server cannot evaluate (TQ022).

Each finding has file:line, the logical id of the resource it is about (the
template's logical id, or the tidemq.yaml key such as queues[orders]), a rule
id, a severity and a fix; JSON has the id as "resource", SARIF in each
location's logicalLocations. The exit status is 1 when there is an error
finding, 2 when the file cannot be linted at all (it is missing, is not valid
YAML or JSON, or a template cannot be evaluated), 0 otherwise. --schema prints
the JSON Schema of tidemq.yaml instead. 'tidemq apply' and 'tidemq serve
--config' run the same checks first and stop on an error finding.

A finding that does not apply can be suppressed, per rule and per resource,
with its reason: in a template, in the resource's Metadata (AWS ignores it)

  EnrichmentPipelineQueue:
    Type: AWS::SQS::Queue
    Metadata:
      tidemq:
        suppress:
          - rule: TQ005
            reason: the scorer's event source is off until the model is retrained

in a tidemq.yaml, under lint.suppress ({rule, resource: queues[orders],
reason}; without resource, for every element), or on the command line with
--suppress RULE[:RESOURCE]. A suppressed finding is still shown, marked
"suppressed" with its reason (JSON: "suppressed"; SARIF: "suppressions"), and
does not count: every other check still runs, unlike apply's --no-lint.`,
		Example: `  tidemq lint tidemq.yaml
  tidemq lint lambdas/template.yaml --format sarif > lint.sarif
  tidemq lint --schema > tidemq.schema.json
  tidemq lint template.yaml --suppress TQ006 --suppress TQ005:EnrichmentPipelineQueue`,
		Args: func(cmd *cobra.Command, args []string) error {
			if schema {
				return lintUsage(cobra.NoArgs(cmd, args))
			}
			return lintUsage(cobra.ExactArgs(1)(cmd, args))
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if schema {
				_, err := out.Write(topology.Schema)
				return err
			}
			if format != "text" && format != "json" && format != "sarif" {
				return lintUsage(fmt.Errorf("--format must be text, json or sarif, not %q", format))
			}
			opts, err := tmpl.importOptions(region)
			if err != nil {
				return lintUsage(err)
			}
			c, rep, err := topology.Load(args[0], opts)
			if err != nil {
				return lintUsage(err)
			}
			if err := addSuppressions(c, supp); err != nil {
				return lintUsage(err)
			}
			if rep != nil && format == "text" {
				printReport(cmd.ErrOrStderr(), args[0], rep)
			}
			lo := topology.LintOptions{Region: region, AccountID: tmpl.accountID}
			if creds != "" {
				dir, err := authz.LoadFile(creds, tmpl.accountID)
				if err != nil {
					return lintUsage(fmt.Errorf("--credentials-file: %w", err))
				}
				lo.Permissions = authz.Offline{Dir: dir, Account: tmpl.accountID}
			}
			fs := topology.LintWith(c, lo)
			if err := topology.WriteFindings(out, format, fs); err != nil {
				return err
			}
			if topology.HasErrors(fs) {
				return &exitError{code: 1, err: errors.New("lint found errors")}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&format, "format", "text", "output format: text, json or sarif")
	f.BoolVar(&schema, "schema", false, "print the JSON Schema of tidemq.yaml and exit")
	f.StringVar(&region, "region", "us-east-1", "AWS::Region when reading a template")
	f.StringArrayVar(&supp, "suppress", nil, suppressUsage)
	f.StringVar(&creds, "credentials-file", "", "the permissions file of 'serve --auth --credentials-file': also check that functions may consume and produce as their principal, that topics may deliver into their queues under the queues' policies, that someone may redrive each dead-letter queue, and that queue and topic policies can be evaluated (TQ019-TQ022)")
	tmpl.register(f)
	bindEnv(cmd)
	return cmd
}

// lintUsage gives an error that keeps lint from linting at all (a bad
// flag, an unreadable or invalid file) exit status 2, so that a CI job can
// tell it from findings (1).
func lintUsage(err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: 2, err: err}
}

func printReport(w io.Writer, file string, rep *topology.ImportReport) {
	for _, u := range rep.Unsupported {
		fmt.Fprintf(w, "%s:%d: note: resource %s (%s) is not modelled; skipped\n", file, u.Line, u.LogicalID, u.Type)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "%s: note: %s\n", file, n)
	}
}
