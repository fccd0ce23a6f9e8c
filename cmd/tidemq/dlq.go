package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/tidemq/tidemq/dlq"
)

// dlqOptions are the connection flags every dlq subcommand shares.
type dlqOptions struct {
	clientOptions
	mode     string
	progress bool
	wait     int32
}

func newDLQCommand() *cobra.Command {
	o := &dlqOptions{}
	cmd := &cobra.Command{
		Use:   "dlq",
		Short: "Inspect, explain, redrive, export and purge dead-letter queues (tidemq or AWS)",
		Long: `Work with dead-letter queues on tidemq or on Amazon SQS itself.

Credentials come from the standard AWS chain (environment, shared config and
credentials files with --profile, SSO, IMDS...). --endpoint points at tidemq
(default http://127.0.0.1:9324, like every tidemq command) or any
SQS-compatible endpoint; --endpoint aws means Amazon SQS in --region.

On tidemq the commands use tidemq's extensions: 'peek' and 'export' change
nothing about the messages and show each message's history (who received it,
and why it was dead-lettered); 'list' shows the age of the oldest message. On
AWS, looking at a message takes a receive, which raises its receive count:
'peek', 'export' and 'redrive --dry-run' ask for --allow-receive.`,
		Example: `  tidemq dlq list
  tidemq dlq list --endpoint aws --region eu-west-1 --profile prod
  tidemq dlq peek orders-dlq -n 5
  tidemq dlq redrive orders-dlq                      # a message move task
  tidemq dlq redrive orders-dlq --mark --filter 'attr.tenant == "acme"'
  tidemq dlq redrive loader_dlq --body-set inner.eventDetail.dlq_redrive_count+=1
  tidemq dlq export orders-dlq -o dead.jsonl && tidemq dlq import orders-replay -i dead.jsonl
  tidemq dlq purge orders-dlq`,
	}
	pf := cmd.PersistentFlags()
	o.register(pf, defaultEndpoint)
	for _, name := range []string{"endpoint", "region", "profile"} {
		pf.Lookup(name).Usage += " [$" + envName(name) + "]"
	}
	pf.StringVar(&o.mode, "mode", "auto", "endpoint kind: auto (detect), tidemq or aws [$TIDEMQ_MODE]")
	pf.BoolVar(&o.progress, "progress", term.IsTerminal(int(os.Stderr.Fd())), "show progress bars on stderr [$TIDEMQ_PROGRESS]")
	pf.Int32Var(&o.wait, "wait", 2, "seconds each receive long-polls after an empty one, when draining a queue [$TIDEMQ_WAIT]")
	cmd.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		// The shared flags from the environment; each subcommand's own
		// flags are bound by bindEnv (purge's --yes deliberately is not).
		for _, name := range []string{"endpoint", "region", "profile", "mode", "progress", "wait"} {
			f := cmd.Flags().Lookup(name)
			if f == nil || f.Changed {
				continue
			}
			if v, ok := os.LookupEnv(envName(name)); ok {
				if err := cmd.Flags().Set(name, v); err != nil {
					return fmt.Errorf("invalid $%s: %w", envName(name), err)
				}
			}
		}
		return nil
	}
	for _, sub := range []*cobra.Command{newDLQListCommand(o), newDLQPeekCommand(o), newDLQRedriveCommand(o),
		newDLQExportCommand(o), newDLQImportCommand(o)} {
		bindEnv(sub)
		cmd.AddCommand(sub)
	}
	cmd.AddCommand(newDLQPurgeCommand(o))
	return cmd
}

// client builds the toolkit's client from the flags and the AWS chain.
func (o *dlqOptions) client(ctx context.Context, out, errw io.Writer) (*dlq.Client, error) {
	c := &dlq.Client{Out: out, Err: errw, Progress: o.progress, PollWait: o.wait}
	switch o.mode {
	case "auto":
	case "tidemq":
		c.Mode = dlq.ModeTidemq
	case "aws":
		c.Mode = dlq.ModeAWS
	default:
		return nil, fmt.Errorf("--mode must be auto, tidemq or aws, not %q", o.mode)
	}
	var err error
	c.SQS, err = o.sqsClient(ctx, errw)
	return c, err
}

// run runs a dlq subcommand with a context that Ctrl-C cancels.
func (o *dlqOptions) run(cmd *cobra.Command, f func(ctx context.Context, c *dlq.Client) error) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	c, err := o.client(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	return f(ctx, c)
}

func newDLQListCommand(o *dlqOptions) *cobra.Command {
	var prefix string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List every dead-letter queue: sources, true depth, oldest message",
		Long: `List every dead-letter queue with the queues that feed it and their
maxReceiveCount, its true depth (visible + in flight + delayed) and, on tidemq,
the age of its oldest message (on AWS that is the CloudWatch metric
ApproximateAgeOfOldestMessage, which this command does not read).

A dead-letter queue is a queue some RedrivePolicy points to, a queue named like
one (ending in -dlq, _dlq, DLQ or -dead-letter-queue, or starting with dlq-,
.fifo aside) and, on tidemq, a queue holding messages that were dead-lettered
into it. So a DLQ stays listed after its source queue is deleted; its sources
then read (none).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, func(ctx context.Context, c *dlq.Client) error { return c.List(ctx, prefix) })
		},
	}
	cmd.Flags().StringVar(&prefix, "prefix", "", "only DLQs whose name starts with this")
	return cmd
}

func newDLQPeekCommand(o *dlqOptions) *cobra.Command {
	var p dlq.PeekOptions
	var filter string
	cmd := &cobra.Command{
		Use:   "peek QUEUE",
		Short: "Show messages without consuming them, and why they died",
		Long: `Show the messages of a queue (name, URL or ARN) without consuming them: the body
(JSON indented, SNS envelopes unwrapped one level), message attributes, receive
count, source queue, age, a delayed message's delay and when it becomes
receivable and, on tidemq, the message's history: every receive
with the client's address, User-Agent and access key, every visibility expiry,
and the reason it was dead-lettered.

On tidemq, peek changes nothing (no receive count, no visibility). On AWS it has
to receive: it needs --allow-receive, and each message's receive count goes up.

` + dlq.FilterHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := dlq.ParseFilter(filter)
			if err != nil {
				return err
			}
			p.Filter = f
			return o.run(cmd, func(ctx context.Context, c *dlq.Client) error { return c.Peek(ctx, args[0], p) })
		},
	}
	f := cmd.Flags()
	f.IntVarP(&p.Max, "number", "n", 10, "how many messages to show (tidemq: at most 1000)")
	f.BoolVar(&p.IncludeInflight, "include-inflight", false, "also show in-flight messages (tidemq; delayed ones are always shown, with when they become receivable)")
	f.BoolVar(&p.AllowReceive, "allow-receive", false, "on AWS, allow peeking by receiving (raises receive counts)")
	f.Int32Var(&p.Visibility, "visibility", 30, "on AWS, seconds the received messages stay hidden while peeking")
	f.StringVar(&filter, "filter", "", "show only messages matching this expression (see above)")
	return cmd
}

func newDLQRedriveCommand(o *dlqOptions) *cobra.Command {
	var r dlq.RedriveOptions
	var filter string
	var bodySet []string
	cmd := &cobra.Command{
		Use:   "redrive QUEUE",
		Short: "Move dead letters back to their sources or to another queue",
		Long: `Move the messages of a dead-letter queue back to the queue each came from (its
DeadLetterQueueSourceArn; for messages sent to the DLQ directly, which have
none, the DLQ's only source queue: the one queue whose RedrivePolicy names it)
or to --to. A message whose source cannot be told (the DLQ has several source
queues, or none any more) or no longer exists stays in the DLQ and is named,
with the reason; --to sends it somewhere explicit.

With nothing but --to and --rate, this starts a message move task
(StartMessageMoveTask) and follows it to its end; Ctrl-C cancels the task. What
a task cannot do is then done message by message: a DLQ no RedrivePolicy names
any more (a task cannot start), and, without --to, messages sent to the DLQ
directly or whose source queue is gone (the task stops at the first of them).

With --limit, --filter, --mark, --body-set or --dry-run it receives, sends and
deletes instead: the body is sent byte for byte (an SNS envelope arrives intact)
unless --body-set changes it, with its message attributes, trace header and
FIFO group and a new deduplication id; a message is deleted only after its send
was acknowledged. Messages the filter does not match stay in the queue (on a
FIFO queue, they hold back the rest of their group).

A redrive pass is bounded by what was in the DLQ when it started: it handles
at most that many messages (a progress bar counts them) and ends then, or after
three empty receives in a row, and it never moves a message twice. A message it
moved that a live consumer fails again at once (dead-lettered by
maxReceiveCount, or sent straight back to the DLQ with the body the redrive
sent) stays in the DLQ, and the summary names it. The same bound holds for a
move task and what is done after it.

Only a dead-letter queue is redriven: a queue some RedrivePolicy names, one
named like a DLQ (orders-dlq, loader_dlq, OrdersDLQ...), one whose
RedriveAllowPolicy lists its sources, or on tidemq one holding dead-lettered
messages. Any other queue is refused (redriving a live queue takes the messages
its consumers wait for); --force redrives it anyway.

--mark adds message attributes a consumer can read:
  tidemq.redriven=true, tidemq.redrive-count=N (the message's own count + 1),
  and with --final-pass tidemq.final-pass=true.

` + dlq.BodyEditHelp + `

Exit status:
  0  every message asked for was redriven (with --dry-run: would be)
  1  an error stopped the redrive (a message is deleted from the DLQ only
     after its send was acknowledged, so none is lost)
  2  partial: the redrive ran to its end but left messages in the DLQ, or
     messages it moved came back; each is named on standard output with the
     reason

` + dlq.FilterHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := dlq.ParseFilter(filter)
			if err != nil {
				return err
			}
			r.Filter = f
			for _, s := range bodySet {
				e, err := dlq.ParseBodyEdit(s)
				if err != nil {
					return err
				}
				r.BodyEdits = append(r.BodyEdits, e)
			}
			return o.run(cmd, func(ctx context.Context, c *dlq.Client) error {
				res, err := c.Redrive(ctx, args[0], r)
				if err == nil && res.Partial() {
					what := "were not redriven"
					if r.DryRun {
						what = "would not be redriven"
					}
					if len(res.CameBack) > 0 && len(res.NotRedriven)+res.Failed == 0 {
						return &exitError{code: 2, err: fmt.Errorf("partial redrive: %d message(s) came back to the DLQ (see above)", len(res.CameBack))}
					}
					return &exitError{code: 2, err: fmt.Errorf("partial redrive: %d message(s) %s (see above)", len(res.NotRedriven)+res.Failed+len(res.CameBack), what)}
				}
				return err
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&r.To, "to", "", "destination queue (default: each message's source)")
	f.IntVar(&r.Rate, "rate", 0, "at most this many messages per second (0: no limit)")
	f.IntVar(&r.Limit, "limit", 0, "move at most this many messages (0: all)")
	f.StringVar(&filter, "filter", "", "move only messages matching this expression (see above)")
	f.BoolVar(&r.Mark, "mark", false, "add redrive markers (tidemq.redriven, tidemq.redrive-count)")
	f.BoolVar(&r.FinalPass, "final-pass", false, "add tidemq.final-pass=true (implies --mark)")
	f.StringArrayVar(&bodySet, "body-set", nil, "change the JSON body: PATH=VALUE or PATH+=N, through JSON strings (repeatable; see above)")
	f.BoolVar(&r.DryRun, "dry-run", false, "print what would move and move nothing")
	f.BoolVar(&r.AllowReceive, "allow-receive", false, "on AWS, allow --dry-run to look by receiving")
	f.Int32Var(&r.Visibility, "visibility", 60, "seconds a received message stays hidden while it is moved")
	f.BoolVar(&r.Force, "force", false, "redrive a queue that is not a dead-letter queue")
	return cmd
}

func newDLQExportCommand(o *dlqOptions) *cobra.Command {
	var e dlq.ExportOptions
	var file, filter string
	cmd := &cobra.Command{
		Use:   "export QUEUE",
		Short: "Write a queue's messages as JSON Lines, without consuming them",
		Long: `Write the messages of a queue as JSON Lines, one message a line: the body exactly
as sent, message attributes with their types (binary values in base64), group
and deduplication ids, system attributes and, on tidemq, the history.

On tidemq this is a peek: nothing about the messages changes. On AWS it needs
--allow-receive: the messages are received (receive counts go up), written,
and made visible again.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := dlq.ParseFilter(filter)
			if err != nil {
				return err
			}
			e.Filter = f
			w := cmd.OutOrStdout()
			if file != "" && file != "-" {
				fh, err := os.Create(file)
				if err != nil {
					return err
				}
				defer fh.Close()
				w = fh
			}
			err = o.run(cmd, func(ctx context.Context, c *dlq.Client) error {
				_, err := c.Export(ctx, args[0], w, e)
				return err
			})
			if fh, ok := w.(*os.File); ok && fh != os.Stdout && err == nil {
				err = fh.Close()
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVarP(&file, "output", "o", "", "file to write (default: standard output)")
	f.IntVarP(&e.Max, "number", "n", 1000, "most messages to export")
	f.BoolVar(&e.IncludeInflight, "include-inflight", false, "also export in-flight messages (tidemq; delayed ones are always exported, with DelaySeconds and VisibleAt)")
	f.BoolVar(&e.AllowReceive, "allow-receive", false, "on AWS, allow exporting by receiving (raises receive counts)")
	f.Int32Var(&e.Visibility, "visibility", 300, "on AWS, seconds the received messages stay hidden while exporting")
	f.StringVar(&filter, "filter", "", "export only messages matching this expression (see 'dlq peek --help')")
	return cmd
}

func newDLQImportCommand(o *dlqOptions) *cobra.Command {
	var im dlq.ImportOptions
	var file string
	cmd := &cobra.Command{
		Use:   "import QUEUE",
		Short: "Send the messages of a JSON Lines export to a queue",
		Long: `Send every line of a 'dlq export' file to a queue: the body byte for byte, the
message attributes, the trace header and, into a FIFO queue, the message group
with a new deduplication id (--keep-dedup-id keeps the exported one).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r := cmd.InOrStdin()
			if file != "" && file != "-" {
				fh, err := os.Open(file)
				if err != nil {
					return err
				}
				defer fh.Close()
				r = fh
			}
			return o.run(cmd, func(ctx context.Context, c *dlq.Client) error {
				_, err := c.Import(ctx, args[0], r, im)
				return err
			})
		},
	}
	f := cmd.Flags()
	f.StringVarP(&file, "input", "i", "", "file to read (default: standard input)")
	f.BoolVar(&im.KeepDedupID, "keep-dedup-id", false, "send the exported deduplication ids (FIFO)")
	f.StringVar(&im.Group, "group", "", "message group for lines without one (FIFO)")
	return cmd
}

func newDLQPurgeCommand(o *dlqOptions) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "purge QUEUE",
		Short: "Delete every message of a queue, after confirmation",
		Long: `Delete every message of a queue (PurgeQueue). You are asked to type the queue's
name; without a terminal the command refuses unless --yes is given.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			interactive := false
			if f, ok := cmd.InOrStdin().(*os.File); ok {
				interactive = term.IsTerminal(int(f.Fd()))
			}
			return o.run(cmd, func(ctx context.Context, c *dlq.Client) error {
				err := c.Purge(ctx, args[0], dlq.PurgeOptions{Yes: yes, Interactive: interactive, In: cmd.InOrStdin()})
				if errors.Is(err, dlq.ErrNotConfirmed) {
					return &exitError{code: 1, err: err}
				}
				return err
			})
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "purge without asking")
	return cmd
}

// errShort is the first line of an error, without the SDK's wrapping.
func errShort(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && i+2 < len(s) {
		s = s[i+2:]
	}
	return s
}
