package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"

	"github.com/tidemq/tidemq/top"
)

func newTopCommand() *cobra.Command {
	var client clientOptions
	var source string
	var interval time.Duration
	var once bool
	var sortKey string
	cmd := &cobra.Command{
		Use:   "top",
		Short: "A live view of every queue: depth, in flight, ages, rates, DLQs, alarms",
		Long: `Show every queue of an endpoint, refreshed every --interval: depth (visible +
in flight + delayed), in flight, delayed, the oldest message's age, messages in
and out per second, the depth of the queue's dead-letter queue, and the alarms
that fire.

Against a tidemq server (GET /tidemq/queues) the numbers are exact and come
with ages, rates and alarms. Against any other SQS endpoint, AWS included
(--endpoint aws), top uses ListQueues and GetQueueAttributes: depths and
dead-letter links only. --source auto (the default) asks the endpoint which
it is.

Keys: q quits, s cycles the sort (name, depth, oldest, in, out, dlq),
/ filters by queue name (enter keeps the filter, esc clears it).`,
		Example: `  tidemq top
  tidemq top --endpoint aws --region eu-west-1 --profile prod
  tidemq top --once --sort depth`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			src, err := topSource(ctx, &client, source)
			if err != nil {
				return err
			}
			if !slices.Contains(top.SortKeys, sortKey) {
				return fmt.Errorf("--sort must be one of %s", strings.Join(top.SortKeys, ", "))
			}
			if once {
				fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				defer cancel()
				f, err := src.Fetch(fctx)
				if err != nil {
					return err
				}
				_, err = fmt.Fprint(cmd.OutOrStdout(), top.Render(top.View{Source: src.Name(), At: f.At,
					Rows: top.Rows(nil, f), Sort: sortKey, Static: true}))
				return err
			}
			m := top.New(src, interval).SortBy(sortKey)
			_, err = tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(ctx)).Run()
			return err
		},
	}
	f := cmd.Flags()
	client.register(f, defaultEndpoint)
	f.StringVar(&source, "source", "auto", "auto, tidemq (GET /tidemq/queues) or sqs (GetQueueAttributes)")
	f.DurationVar(&interval, "interval", time.Second, "refresh interval")
	f.BoolVar(&once, "once", false, "print one frame and exit (no terminal needed)")
	f.StringVar(&sortKey, "sort", "name", "initial sort: "+strings.Join(top.SortKeys, ", "))
	bindEnv(cmd)
	return cmd
}

func topSource(ctx context.Context, client *clientOptions, source string) (top.Source, error) {
	tidemqSrc := &top.TidemqSource{Endpoint: client.endpoint}
	if client.custom() {
		hc, err := (&adminOptions{*client}).httpClient(ctx, nil)
		if err != nil {
			return nil, err
		}
		tidemqSrc.Client = hc
	}
	switch source {
	case "tidemq":
		if client.endpoint == "aws" {
			return nil, fmt.Errorf("--source tidemq needs a tidemq --endpoint, not aws")
		}
		return tidemqSrc, nil
	case "auto":
		if client.endpoint != "aws" {
			pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			ok := tidemqSrc.Probe(pctx)
			cancel()
			if ok {
				return tidemqSrc, nil
			}
		}
	case "sqs":
	default:
		return nil, fmt.Errorf("--source must be auto, tidemq or sqs, not %q", source)
	}
	c, err := client.sqsClient(ctx, os.Stderr)
	if err != nil {
		return nil, err
	}
	label := client.endpoint
	if !client.custom() {
		label = "aws " + client.region
	}
	return &top.SQSSource{Client: c, Label: label}, nil
}
