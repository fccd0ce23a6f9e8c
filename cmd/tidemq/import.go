package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/tidemq/tidemq/topology"
)

func newImportCommand() *cobra.Command {
	var (
		output string
		region string
		tmpl   templateOptions
	)
	cmd := &cobra.Command{
		Use:   "import TEMPLATE",
		Short: "Convert a CloudFormation/SAM template into a tidemq.yaml",
		Long: `Read a CloudFormation or SAM template (YAML with short-form tags, or JSON) and
write the equivalent tidemq.yaml: its SQS queues (every attribute, redrive
policies, queue policies, tags), SNS topics (attributes, tags) and subscriptions
(filter policy and scope, raw delivery, redrive policy), functions (timeout,
reserved concurrency, the queues they send to, and the local stand-in given in
a function's Metadata.tidemq: url, headers, command, dir), SQS event sources
and queue alarms. Parameters take their defaults unless given with --param; resources of
other types are listed on stderr and skipped.`,
		Example: `  tidemq import lambdas/template.yaml > tidemq.yaml
  tidemq import template.json --param Stage=dev -o tidemq.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := tmpl.importOptions(region)
			if err != nil {
				return err
			}
			c, rep, err := topology.ImportFile(args[0], opts)
			if err != nil {
				return err
			}
			printReport(cmd.ErrOrStderr(), args[0], rep)
			b, err := topology.Marshal(c)
			if err != nil {
				return err
			}
			if output == "" || output == "-" {
				_, err = cmd.OutOrStdout().Write(b)
				return err
			}
			return os.WriteFile(output, b, 0o644)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", "", "write the tidemq.yaml here (default: stdout)")
	f.StringVar(&region, "region", "us-east-1", "AWS::Region")
	tmpl.register(f)
	bindEnv(cmd)
	return cmd
}
