package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tidemq/tidemq/adminclient"
	"github.com/tidemq/tidemq/alarms"
)

func newAlarmsCommand() *cobra.Command {
	var admin adminOptions
	var asJSON, all bool
	cmd := &cobra.Command{
		Use:   "alarms",
		Short: "List the alarms a tidemq server evaluates",
		Long: `List the alarms a running tidemq server evaluates (GET /tidemq/alarms): the
firing ones, or all of them with --all. The exit status is 0 whether or not
alarms fire; use --json for scripts.

The alarms: dlq_not_empty (a dead-letter queue has visible messages),
oldest_message_age (older than a share of the retention period, 50% by
default), consumer_gone (visible messages and no receive for 15 minutes),
sustained_growth (depth grew at every evaluation for 10 minutes),
messages_expired (messages reached the end of the retention period in the
last hour), and, per trigger, trigger_errors (failed invocations in the last
5 minutes; the summary names the trigger).`,
		Example: `  tidemq alarms
  tidemq alarms --all --endpoint http://tidemq.internal:9324
  tidemq alarms rules > prometheus-rules.yml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			client, err := admin.client(cmd.Context(), nil)
			if err != nil {
				return err
			}
			l, err := fetchAlarms(cmd.Context(), client, all)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(l)
			}
			return printAlarms(cmd.OutOrStdout(), l.Alarms, time.Now(), all)
		},
	}
	f := cmd.Flags()
	admin.register(f)
	f.BoolVar(&asJSON, "json", false, "print JSON")
	f.BoolVar(&all, "all", false, "include alarms that are OK")
	bindEnv(cmd)
	cmd.AddCommand(newRulesCommand(), newDashboardCommand())
	return cmd
}

// fetchAlarms reads every alarm (all), or only the firing ones: those
// come first, so the pages after the first alarm that does not fire are
// not read.
func fetchAlarms(ctx context.Context, client *adminclient.Client, all bool) (*alarms.List, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	fetch := client.FiringAlarms
	if all {
		fetch = client.Alarms
	}
	l, err := fetch(ctx)
	return l, adminError(err)
}

// printAlarms writes the alarms as a table.
func printAlarms(w io.Writer, as []alarms.Alarm, now time.Time, all bool) error {
	if len(as) == 0 {
		if all {
			_, err := fmt.Fprintln(w, "no alarms evaluated yet")
			return err
		}
		_, err := fmt.Fprintln(w, "no alarms firing")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STATE\tQUEUE\tALARM\tFOR\tSUMMARY")
	for _, a := range as {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.State, a.Queue, a.Alarm, now.Sub(a.Since).Round(time.Second), a.Summary)
	}
	return tw.Flush()
}
