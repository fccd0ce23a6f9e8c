package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"
	"golang.org/x/term"

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
			return runTop(ctx, m)
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

// topGrace is how long top waits, after SIGTERM or SIGINT, for its event
// loop to restore the terminal and return before it restores the terminal
// itself and exits.
const topGrace = 2 * time.Second

// runTop runs top's program until q, SIGINT or SIGTERM. The signals are
// handled here, not by Bubble Tea: its handler only queues a message for
// the event loop, so an event loop that is stuck (a terminal that does not
// take output, a query it never answers) made top ignore both signals until
// kill -9. Here a signal asks the program to quit and, if it has not
// returned within topGrace, the terminal is restored and the process exits
// (130 for SIGINT, 143 for SIGTERM). Ctrl-C in the raw terminal is a key
// and quits cleanly (exit 0), as q does.
func runTop(ctx context.Context, m tea.Model) error {
	var saved *term.State
	if term.IsTerminal(int(os.Stdin.Fd())) {
		saved, _ = term.GetState(int(os.Stdin.Fd()))
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(ctx), tea.WithoutSignalHandler())
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case s := <-sigs:
			go p.Quit()
			select {
			case <-done:
			case <-time.After(topGrace):
				if saved != nil {
					_ = term.Restore(int(os.Stdin.Fd()), saved)
				}
				// Leave the alternate screen and show the cursor, unless the
				// terminal takes no output (the write then blocks, and is
				// left behind).
				wrote := make(chan struct{})
				go func() { fmt.Fprint(os.Stdout, "\x1b[?1049l\x1b[?25h"); close(wrote) }()
				select {
				case <-wrote:
				case <-time.After(100 * time.Millisecond):
				}
				code := 130
				if s == syscall.SIGTERM {
					code = 143
				}
				os.Exit(code)
			}
		case <-done:
		}
	}()
	_, err := p.Run()
	if errors.Is(err, tea.ErrInterrupted) {
		return nil
	}
	return err
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
