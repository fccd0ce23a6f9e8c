package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	)
	cmd := &cobra.Command{
		Use:   "apply FILE",
		Short: "Create or update the queues of a tidemq.yaml or template on an SQS endpoint",
		Long: `Make the queues of a topology (a tidemq.yaml, or a CloudFormation/SAM template)
exist with the declared attributes and tags on a running tidemq server, or on
AWS itself, through the SQS API. Dead-letter queues are created before their
sources. Queues are never deleted; attributes the topology leaves out go back
to the SQS defaults. Applying twice changes nothing the second time.

The plan is printed: + create, ~ update, = unchanged. --dry-run only prints it.
Topics, functions, triggers and alarms are not applied.`,
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
			cl, err := client.sqsClient(cmd.Context(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			plan, err := topology.Apply(cmd.Context(), &sqsTarget{client: cl, urls: map[string]string{}}, c, dryRun)
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
	client.register(f, "http://127.0.0.1:9324")
	tmpl.register(f)
	f.BoolVar(&dryRun, "dry-run", false, "print the plan without changing anything")
	bindEnv(cmd)
	return cmd
}

// applyConfigFile applies a tidemq.yaml or template to the broker of
// 'tidemq serve --config'.
func applyConfigFile(ctx context.Context, b tidemq.Broker, path, region, accountID string, log *slog.Logger) error {
	c, rep, err := topology.Load(path, topology.ImportOptions{Region: region, AccountID: accountID})
	if err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	if rep != nil {
		for _, u := range rep.Unsupported {
			log.Info("config: resource not modelled, skipped", "resource", u.LogicalID, "type", u.Type, "line", u.Line)
		}
	}
	plan, err := topology.Apply(ctx, topology.BrokerTarget{Broker: b}, c, false)
	if err != nil {
		return fmt.Errorf("--config %s: %w", path, err)
	}
	for _, ch := range plan.Changes {
		if ch.Action != "unchanged" {
			log.Info("config: queue "+ch.Action+"d", "queue", ch.Queue, "attributes", len(ch.Attributes))
		}
	}
	return nil
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
