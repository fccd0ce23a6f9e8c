package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/spf13/cobra"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/topology"
)

func newApplyCommand() *cobra.Command {
	var (
		client clientOptions
		tmpl   templateOptions
		dryRun bool
		noLint bool
		supp   []string
	)
	cmd := &cobra.Command{
		Use:   "apply FILE",
		Short: "Create or update the queues, topics and triggers of a tidemq.yaml or template",
		Long: `Make a topology (a tidemq.yaml, or a CloudFormation/SAM template) exist on a
running tidemq server, or on AWS itself:

  queues         through the SQS API, dead-letter queues before their sources;
                 attributes the topology leaves out go back to the SQS defaults
  topics         through the SNS API, with the attributes and tags declared
  subscriptions  (protocol sqs) matched by topic, protocol and endpoint, with
                 RawMessageDelivery, FilterPolicy(Scope) and RedrivePolicy
  triggers       through tidemq's admin API (/tidemq/triggers), for the event
                 sources whose function tidemq can stand in for: a url or a
                 command (Metadata.tidemq in a template), or its own code
                 (Runtime, Handler and CodeUri, run unmodified by the server
                 when it was started with --allow-trigger-commands); the
                 others (no local stand-in, an unsupported runtime, a server
                 that does not run code) are listed as not applied, with
                 the reason

Nothing is ever deleted. Applying twice changes nothing the second time.
Queue alarms are applied only by 'tidemq serve --config' (the built-in
alarms' thresholds have no API); here they are listed as not applied.

The plan is printed: + create, ~ update, = unchanged, ! not applied (with the
reason). --dry-run only prints it.

The file is linted first (see 'tidemq lint'): an error finding stops apply
before it changes anything (exit status 1, the findings on standard error);
warnings are printed and do not stop it. A finding that does not apply can be
suppressed (see 'tidemq lint --help'; --suppress RULE[:RESOURCE] here); --no-lint
skips every check.`,
		Example: `  tidemq apply tidemq.yaml --endpoint http://127.0.0.1:9324
  tidemq apply lambdas/template.yaml --endpoint http://127.0.0.1:9324 --dry-run`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			region := client.region
			if region == "" {
				region = "us-east-1"
			}
			opts, err := tmpl.importOptions(region)
			if err != nil {
				return err
			}
			c, rep, err := topology.Load(args[0], opts)
			if err != nil {
				return err
			}
			if rep != nil {
				printReport(cmd.ErrOrStderr(), args[0], rep)
			}
			if err := addSuppressions(c, supp); err != nil {
				return err
			}
			if !noLint {
				warnings, notes, err := lintBeforeApply(c, printFindings(cmd.ErrOrStderr()))
				if err != nil {
					return err
				}
				if warnings+notes > 0 {
					fmt.Fprintln(cmd.ErrOrStderr(), lintSummary(warnings, notes, args[0]))
				}
			}
			cl, err := client.sqsClient(cmd.Context(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			targets := topology.Targets{
				Queues: &sqsTarget{client: cl, urls: map[string]string{}},
				Topics: &snsTarget{client: snsClientLike(cl)},
				NotApplied: map[string]string{
					topology.KindAlarm: "the built-in alarms' thresholds are set when the server starts: use 'tidemq serve --config' (or --alarms-config)",
				},
			}
			if client.custom() {
				ac, err := (&adminOptions{client}).client(cmd.Context(), nil)
				if err != nil {
					return err
				}
				targets.Triggers = &triggerAPITarget{client: ac}
			} else {
				targets.NotApplied[topology.KindTrigger] = "triggers run on a tidemq server, and the endpoint is AWS"
			}
			plan, err := topology.ApplyAll(cmd.Context(), targets, c, dryRun)
			if plan != nil {
				plan.Print(cmd.OutOrStdout())
			}
			if err != nil {
				return err
			}
			if dryRun {
				fmt.Fprintln(cmd.OutOrStdout(), "dry run: nothing changed")
			}
			return nil
		},
	}
	f := cmd.Flags()
	client.register(f, defaultEndpoint)
	tmpl.register(f)
	f.BoolVar(&dryRun, "dry-run", false, "print the plan without changing anything")
	f.BoolVar(&noLint, "no-lint", false, noLintUsage)
	f.StringArrayVar(&supp, "suppress", nil, suppressUsage)
	bindEnv(cmd)
	return cmd
}

// sqsTarget applies a topology through the SQS API.
type sqsTarget struct {
	client *sqs.Client
	urls   map[string]string
}

func (t *sqsTarget) url(ctx context.Context, name string) (string, bool, error) {
	if u, ok := t.urls[name]; ok {
		return u, true, nil
	}
	out, err := t.client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	if err != nil {
		var nf *types.QueueDoesNotExist
		if errors.As(err, &nf) || strings.Contains(err.Error(), "NonExistentQueue") {
			return "", false, nil
		}
		return "", false, err
	}
	t.urls[name] = aws.ToString(out.QueueUrl)
	return t.urls[name], true, nil
}

func (t *sqsTarget) Queue(ctx context.Context, name string) (map[string]string, map[string]string, bool, error) {
	u, ok, err := t.url(ctx, name)
	if err != nil || !ok {
		return nil, nil, false, err
	}
	a, err := t.client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(u), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
	if err != nil {
		return nil, nil, false, err
	}
	tg, err := t.client.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: aws.String(u)})
	if err != nil {
		return nil, nil, false, err
	}
	return a.Attributes, tg.Tags, true, nil
}

func (t *sqsTarget) CreateQueue(ctx context.Context, name string, attrs, tags map[string]string) (string, error) {
	out, err := t.client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs, Tags: tags})
	if err != nil {
		return "", err
	}
	u := aws.ToString(out.QueueUrl)
	t.urls[name] = u
	a, err := t.client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(u), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	if err != nil {
		return "", err
	}
	return a.Attributes[tidemq.AttrQueueArn], nil
}

func (t *sqsTarget) SetQueueAttributes(ctx context.Context, name string, attrs map[string]string) error {
	u, _, err := t.url(ctx, name)
	if err != nil {
		return err
	}
	_, err = t.client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(u), Attributes: attrs})
	return err
}

func (t *sqsTarget) TagQueue(ctx context.Context, name string, tags map[string]string) error {
	u, _, err := t.url(ctx, name)
	if err != nil {
		return err
	}
	_, err = t.client.TagQueue(ctx, &sqs.TagQueueInput{QueueUrl: aws.String(u), Tags: tags})
	return err
}

func (t *sqsTarget) UntagQueue(ctx context.Context, name string, keys []string) error {
	u, _, err := t.url(ctx, name)
	if err != nil {
		return err
	}
	_, err = t.client.UntagQueue(ctx, &sqs.UntagQueueInput{QueueUrl: aws.String(u), TagKeys: keys})
	return err
}
