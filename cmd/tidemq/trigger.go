package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tidemq/tidemq/adminclient"
	"github.com/tidemq/tidemq/trigger"
)

func newTriggerCommand() *cobra.Command {
	var admin adminOptions
	cmd := &cobra.Command{
		Use:   "trigger",
		Short: "Manage triggers: Lambda-style consumers that a tidemq server runs",
		Long: `A trigger (an event source mapping, in Lambda's words) long-polls one queue
and delivers batches to an HTTP endpoint (POST of the Lambda SQS event), to a
command (the event on stdin, the response on stdout), or to a Lambda function
run unmodified through the Lambda Runtime API (--runtime, --handler,
--code-uri); commands and functions need a server run with
--allow-trigger-commands. Success deletes the batch; an error or a timeout
leaves it to come back after the visibility timeout; with
--report-batch-item-failures the response {"batchItemFailures":[...]} keeps
only the listed messages.

These commands talk to a running server's admin API (/tidemq/triggers), signing
their requests with the AWS credentials of the standard chain (or --profile),
as a server with --auth requires. It never shows a target's secrets: header
values and the userinfo of a URL read ` + trigger.Redacted + `.`,
		Example: `  tidemq trigger create orders-fn --queue orders --url http://127.0.0.1:8080/ --batch-size 5 --report-batch-item-failures
  tidemq trigger create local --queue jobs.fifo --timeout 30 -- ./handler.sh
  tidemq trigger create py --queue jobs --runtime python3.12 --handler app.handler --code-uri ./src
  tidemq trigger list
  tidemq trigger update orders-fn --max-concurrency 10
  tidemq trigger disable orders-fn`,
	}
	admin.register(cmd.PersistentFlags())
	cmd.PersistentFlags().VisitAll(func(f *pflag.Flag) { f.Usage += fmt.Sprintf(" [$%s]", envName(f.Name)) })
	var client *adminclient.Client
	cmd.PersistentPreRunE = func(sub *cobra.Command, args []string) error {
		if err := setFromEnv(sub.InheritedFlags()); err != nil {
			return err
		}
		var err error
		client, err = admin.client(sub.Context(), nil)
		return err
	}

	create := &cobra.Command{
		Use:   "create NAME --queue QUEUE (--url URL | --runtime RUNTIME --code-uri DIR [--handler H] | -- COMMAND [ARGS...])",
		Short: "Create a trigger",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			patch, err := triggerFlagsToJSON(cmd, args)
			if err != nil {
				return err
			}
			patch["Name"] = args[0]
			s, err := client.CreateTrigger(cmd.Context(), patch)
			if err != nil {
				return adminError(err)
			}
			return printTriggerResult(cmd.OutOrStdout(), "created", s)
		},
	}
	addTriggerFlags(create)
	update := &cobra.Command{
		Use:   "update NAME [flags] [-- COMMAND [ARGS...]]",
		Short: "Change a trigger's settings (only the flags given)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			patch, err := triggerFlagsToJSON(cmd, args)
			if err != nil {
				return err
			}
			s, err := client.UpdateTrigger(cmd.Context(), args[0], patch)
			if err != nil {
				return adminError(err)
			}
			return printTriggerResult(cmd.OutOrStdout(), "updated", s)
		},
	}
	addTriggerFlags(update)
	var asJSON bool
	var recent int
	list := &cobra.Command{
		Use:   "list",
		Short: "List triggers with their state, counters and recent invocations",
		Long: `List the triggers with their state (Enabled, Disabled, Paused: the queue's
visibility timeout is not above the function timeout, Failing: the trigger cannot
poll its queue), their counters, and each trigger's latest invocations: when,
how many records, how long, the outcome (success, partial_failure, error,
timeout, throttle, invalid_response), how many messages were left to come back
and the error. The server remembers the last ` + fmt.Sprint(trigger.RecentInvocations) + ` invocations of each trigger,
in memory.`,
		Example: `  tidemq trigger list
  tidemq trigger list --recent 0
  tidemq trigger list --json | jq '.Triggers[] | {Name, State, RecentInvocations}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ts, err := client.Triggers(cmd.Context())
			if err != nil {
				return adminError(err)
			}
			l := struct{ Triggers []*trigger.Status }{ts}
			for _, s := range l.Triggers {
				// A server redacts them already; an older one did not.
				s.Target = s.Target.WithoutSecrets()
				if (!asJSON || cmd.Flags().Changed("recent")) && len(s.RecentInvocations) > recent {
					s.RecentInvocations = s.RecentInvocations[:max(recent, 0)]
				}
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(l)
			}
			return printTriggers(cmd.OutOrStdout(), l.Triggers)
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	list.Flags().IntVar(&recent, "recent", 5, fmt.Sprintf("invocations shown per trigger, latest first; 0 for none (with --json: all the server keeps, up to %d, unless given)", trigger.RecentInvocations))
	toggle := func(use string, on bool) *cobra.Command {
		return &cobra.Command{
			Use:   use + " NAME",
			Short: strings.ToUpper(use[:1]) + use[1:] + " a trigger",
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				s, err := client.SetTriggerEnabled(cmd.Context(), args[0], on)
				if err != nil {
					return adminError(err)
				}
				return printTriggerResult(cmd.OutOrStdout(), use+"d", s)
			},
		}
	}
	del := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a trigger (invocations in flight finish first)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := client.DeleteTrigger(cmd.Context(), args[0]); err != nil {
				return adminError(err)
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "deleted %s\n", args[0])
			return err
		},
	}
	cmd.AddCommand(create, list, update, toggle("enable", true), toggle("disable", false), del)
	return cmd
}

func addTriggerFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.String("queue", "", "queue to poll (create only)")
	f.String("url", "", "HTTP target: the event is POSTed here")
	f.StringArray("header", nil, "header added to every POST, as Name=Value (repeatable); in an update, the headers given replace all the trigger's headers, and Name='"+trigger.Redacted+"' keeps a stored value")
	f.String("dir", "", "working directory of a command target")
	f.Int("batch-size", 0, "BatchSize: up to 10 on FIFO queues, over 10 needs --batching-window (default 10)")
	f.Int("batching-window", 0, "MaximumBatchingWindowInSeconds, 0 to 300")
	f.Bool("report-batch-item-failures", false, "FunctionResponseTypes ReportBatchItemFailures: read batchItemFailures")
	f.Int("max-concurrency", 0, "ScalingConfig.MaximumConcurrency, 2 to 1000 (default 5 pollers)")
	f.Float64("timeout", 0, "function timeout in seconds, below the queue's visibility timeout (default 3)")
	f.StringArray("filter", nil, `FilterCriteria pattern, like '{"body":{"type":["order"]}}' (repeatable)`)
	f.Bool("enabled", true, "whether the trigger polls")
	addFunctionFlags(f)
}

// localCommand resolves a command given as a relative path with a slash
// (./handler.sh, bin/worker) that exists from this working directory: its
// absolute path and this directory. Bare names (python3) are left to the
// server's PATH.
func localCommand(name string) (abs, dir string, ok bool) {
	if filepath.IsAbs(name) || !strings.ContainsRune(name, filepath.Separator) {
		return "", "", false
	}
	if _, err := os.Stat(name); err != nil {
		return "", "", false
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", "", false
	}
	return filepath.Join(wd, name), wd, true
}

// triggerFlagsToJSON turns the flags given (and a command after --) into
// trigger settings.
func triggerFlagsToJSON(cmd *cobra.Command, args []string) (map[string]any, error) {
	f := cmd.Flags()
	out := map[string]any{}
	target := map[string]any{}
	if f.Changed("queue") {
		out["Queue"], _ = f.GetString("queue")
	}
	if f.Changed("url") {
		target["URL"], _ = f.GetString("url")
	}
	if f.Changed("header") {
		hs, _ := f.GetStringArray("header")
		m := map[string]string{}
		for _, h := range hs {
			k, v, ok := strings.Cut(h, "=")
			if !ok {
				return nil, fmt.Errorf("--header takes Name=Value, not %q", h)
			}
			m[k] = v
		}
		target["Headers"] = m
	}
	if f.Changed("dir") {
		target["Dir"], _ = f.GetString("dir")
	}
	if dash := cmd.ArgsLenAtDash(); dash >= 0 {
		if len(args[dash:]) == 0 {
			return nil, fmt.Errorf("nothing after --: give the command to run")
		}
		command := append([]string(nil), args[dash:]...)
		if !f.Changed("dir") {
			if abs, dir, ok := localCommand(command[0]); ok {
				// The server runs the command from its own working
				// directory; a path given relative to this shell means
				// this file, so it is sent absolute, run from here.
				command[0], target["Dir"] = abs, dir
			}
		}
		target["Command"] = command
		if dash > 1 {
			return nil, fmt.Errorf("unexpected arguments before --: %v", args[1:dash])
		}
	} else if len(args) > 1 {
		return nil, fmt.Errorf("unexpected arguments %v (put a command target after --)", args[1:])
	}
	fn, err := functionTargetJSON(f, f.Changed("url") || cmd.ArgsLenAtDash() >= 0)
	if err != nil {
		return nil, err
	}
	if _, isURL := target["URL"]; isURL {
		target["Command"] = nil
	} else if _, isCmd := target["Command"]; isCmd {
		target["URL"] = ""
	}
	switch {
	case fn != nil:
		target["Function"], target["URL"], target["Command"] = fn, "", nil
	case f.Changed("url") || cmd.ArgsLenAtDash() >= 0:
		target["Function"] = nil
	}
	if len(target) > 0 {
		out["Target"] = target
	}
	ints := map[string]string{"batch-size": "BatchSize", "batching-window": "MaximumBatchingWindowInSeconds"}
	for flag, key := range ints {
		if f.Changed(flag) {
			out[key], _ = f.GetInt(flag)
		}
	}
	if f.Changed("max-concurrency") {
		n, _ := f.GetInt("max-concurrency")
		out["ScalingConfig"] = map[string]int{"MaximumConcurrency": n}
	}
	if f.Changed("timeout") {
		out["Timeout"], _ = f.GetFloat64("timeout")
	}
	if f.Changed("report-batch-item-failures") {
		on, _ := f.GetBool("report-batch-item-failures")
		types := []string{}
		if on {
			types = append(types, trigger.ReportBatchItemFailures)
		}
		out["FunctionResponseTypes"] = types
	}
	if f.Changed("filter") {
		ps, _ := f.GetStringArray("filter")
		var filters []map[string]string
		for _, p := range ps {
			filters = append(filters, map[string]string{"Pattern": p})
		}
		out["FilterCriteria"] = map[string]any{"Filters": filters}
	}
	if f.Changed("enabled") {
		out["Enabled"], _ = f.GetBool("enabled")
	}
	return out, nil
}

func printTriggerResult(w io.Writer, verb string, s *trigger.Status) error {
	fmt.Fprintf(w, "%s %s (%s, queue %s)\n", verb, s.Name, s.State, s.Queue)
	for _, warn := range s.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	return nil
}

func printTriggers(w io.Writer, ts []*trigger.Status) error {
	if len(ts) == 0 {
		_, err := fmt.Fprintln(w, "no triggers")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tQUEUE\tSTATE\tTARGET\tINVOCATIONS\tERRORS\tTIMEOUTS\tDELETED\tFAILED\tRUNNING\tLAST ERROR")
	for _, s := range ts {
		target := trigger.RedactURL(s.Target.URL)
		if target == "" {
			target = strings.Join(s.Target.Command, " ")
		}
		if f := s.Target.Function; f != nil {
			target = "function " + f.Runtime + " " + f.Handler
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", s.Name, s.Queue, s.State, target,
			s.Stats.Invocations, s.Stats.Errors, s.Stats.Timeouts, s.Stats.MessagesDeleted, s.Stats.MessagesFailed,
			s.Stats.ConcurrentInvocations, oneLine(s.LastError))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range ts {
		if len(s.RecentInvocations) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nrecent invocations of %s, latest first:\n", s.Name)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  TIME\tBATCH\tDURATION\tOUTCOME\tFAILED\tERROR")
		for _, inv := range s.RecentInvocations {
			fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%d\t%s\n", inv.Time.UTC().Format(time.RFC3339), inv.BatchSize,
				seconds(inv.DurationSeconds), inv.Outcome, inv.FailedMessages, oneLine(inv.Error))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// seconds writes a duration in seconds as 12ms, 1.5s: to the millisecond,
// to the microsecond under one.
func seconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	if d < time.Millisecond {
		return d.Round(time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// oneLine keeps a table row on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
