package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/bench"
)

type benchOptions struct {
	client   clientOptions
	clients  int
	count    int
	duration time.Duration
	size     int
	groups   int
	// maxReceives, above 0, gives the scenarios' queues a dead-letter queue.
	maxReceives int
	prefill     int
	json        bool
	queue       string
	rate        int
	depths      []int
	driver      string
	unsigned    bool
	progress    bool
	cpuprof     string
	queues      queuesOptions
}

// queuesOptions are the flags of the queues scenario.
type queuesOptions struct {
	queues     int
	pid        int
	idle       time.Duration
	scrapes    int
	concurrent int
}

func newBenchCommand() *cobra.Command {
	o := &benchOptions{}
	cmd := &cobra.Command{
		Use:   "bench [scenario...]",
		Short: "Measure an SQS endpoint's throughput and latency, and check nothing is lost",
		Long: `Run load against any SQS endpoint (tidemq or AWS), then report messages per second,
latency percentiles, errors, lost and duplicated messages. Every message sent is received
back and checked (its MD5 too): a run that loses or duplicates one fails (exit status 1).

The default client (--client raw) sends pre-built AWS JSON requests, SigV4-signed with the
standard credentials, over plain HTTP: it costs little per request, so on a shared machine
the numbers measure the server; --unsigned drops the signature too (about 10 µs of client
CPU per request), for a tidemq that runs without --auth. --client sdk uses the AWS SDK for
Go instead.

Scenarios (default: all of them, in this order):
  send           SendMessage, one message per request
  send-batch     SendMessageBatch, 10 messages per request
  receive        ReceiveMessage (10) + DeleteMessage per message, over a prefilled queue
  receive-batch  ReceiveMessage (10) + DeleteMessageBatch, over a prefilled queue
  fifo           FIFO with --groups message groups: batched send, then receive + batch delete
  longpoll       wake-up latency: a send while a 5 s long poll waits

Run only when named:
  mixed          producers at --rate messages/s (single sends) next to consumers, for
                 --duration (default 10s): the send latency at a steady load. Without
                 --rate, a 5 s send run measures the maximum first and mixed runs at half
  depth          receive (10) + DeleteMessageBatch of --count messages from a queue
                 that holds at least each of --depths messages throughout (it is
                 filled to depth + --count first): does the cost grow with the backlog?
  sns            SNS Publish to a topic with one SQS subscription (envelope delivery)
  sns-fanout     SNS Publish to a topic with ten SQS subscriptions: deliveries/s is
                 publishes/s x 10 (Publish answers once its SQS deliveries are made)
  sns-batch      SNS PublishBatch (10 per request), one SQS subscription
                 Every subscription's queue is drained afterwards and checked.
  queues         a server with many empty queues: creates --queues queues (those
                 missing; they are left in place), waits --idle, then reports the
                 server's RSS (of --server-pid, else from /metrics), the size and
                 time of a /metrics scrape, of /tidemq/queues and of the console's
                 overview, and the RSS that --concurrent-scrapes scrapes at once add

Each scenario creates its own queue (named after --queue) and deletes it afterwards.`,
		Example: `  tidemq bench --count 20000
  tidemq bench send-batch receive-batch --clients 32 --count 100000 --json
  tidemq bench send --duration 30s --endpoint http://10.0.0.5:9324
  tidemq bench mixed --rate 2000 --duration 30s
  tidemq bench depth --depths 1000,100000,1000000 --count 20000
  tidemq bench queues --queues 100000 --server-pid "$(pgrep -n tidemq)"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.duration > 0 && !cmd.Flags().Changed("count") {
				o.count = 0 // --duration alone: send for that long, however many that is
			}
			return runBench(cmd.Context(), o, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	o.client.register(f, defaultEndpoint)
	f.IntVar(&o.clients, "clients", 16, "concurrent clients")
	f.IntVar(&o.count, "count", 10000, "messages per scenario")
	f.DurationVar(&o.duration, "duration", 0, "for send scenarios: send for this long instead of --count messages (with both, whichever ends first)")
	f.IntVar(&o.size, "size", 256, "message body size in bytes")
	f.IntVar(&o.groups, "groups", 64, "message groups in the fifo scenario")
	f.IntVar(&o.maxReceives, "max-receive-count", 0, "give each scenario's queue a dead-letter queue (its name and -dlq) with this maxReceiveCount; 0: none")
	f.IntVar(&o.prefill, "prefill", 0, "messages queued before a receive scenario (default: --count)")
	f.BoolVar(&o.json, "json", false, "print results as JSON lines")
	f.StringVar(&o.queue, "queue", "tidemq-bench", "prefix of the queues the run creates")
	f.IntVar(&o.rate, "rate", 0, "total send rate of the mixed scenario, messages per second (default: half the measured send maximum)")
	f.StringVar(&o.driver, "client", "raw", "how to talk to the endpoint: raw (pre-built AWS JSON requests) or sdk (the AWS SDK for Go)")
	f.BoolVar(&o.unsigned, "unsigned", false, "with --client raw, send unsigned requests: lighter on the load generator; for tidemq without --auth")
	f.BoolVar(&o.progress, "progress", term.IsTerminal(int(os.Stderr.Fd())), "show a running count of messages on stderr (default: when stderr is a terminal)")
	f.StringVar(&o.cpuprof, "cpuprofile", "", "write a CPU profile of the load generator itself to this file (for go tool pprof)")
	f.IntVar(&o.queues.queues, "queues", 100000, "queues the queues scenario creates")
	f.IntVar(&o.queues.pid, "server-pid", 0, "queues scenario: process id of the server, on this machine, whose RSS is read (default: from /metrics, which misses the peak of concurrent scrapes)")
	f.DurationVar(&o.queues.idle, "idle", 40*time.Second, "queues scenario: how long the server idles once the queues exist before its RSS is read (longer than the alarms' 30 s interval, so that they have evaluated every queue)")
	f.IntVar(&o.queues.scrapes, "scrapes", 3, "queues scenario: sequential scrapes timed (the median is reported)")
	f.IntVar(&o.queues.concurrent, "concurrent-scrapes", 20, "queues scenario: /metrics scrapes sent at once")
	f.IntSliceVar(&o.depths, "depths", []int{1000, 100000, 1000000}, "queue depths of the depth scenario")
	bindEnv(cmd)
	return cmd
}

func runBench(ctx context.Context, o *benchOptions, scenarios []string, stdout, stderr io.Writer) error {
	if len(scenarios) == 0 {
		scenarios = bench.Scenarios
	}
	if o.cpuprof != "" {
		f, err := os.Create(o.cpuprof)
		if err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--cpuprofile: %w", err)}
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	if o.maxReceives < 0 || o.maxReceives > tidemq.MaxMaxReceiveCount {
		return &exitError{code: 2, err: fmt.Errorf("--max-receive-count must be from 0 (no dead-letter queue) to %d, not %d", tidemq.MaxMaxReceiveCount, o.maxReceives)}
	}
	notes := stderr
	if o.unsigned {
		notes = nil // the server takes unsigned requests: placeholder credentials are no news
	}
	sdk, err := o.client.sqsClient(ctx, notes)
	if err != nil {
		return err
	}
	var client bench.Client
	switch o.driver {
	case "raw":
		client = rawBenchClient(sdk, o.clients, !o.unsigned)
	case "sdk":
		client = bench.SDKClient{C: sdk}
	default:
		return &exitError{code: 2, err: fmt.Errorf("--client must be raw or sdk, not %q", o.driver)}
	}
	var runs []bench.Config
	for _, s := range scenarios {
		if s == "queues" {
			continue // runQueuesBench
		}
		cfg := bench.Config{Scenario: s, Queue: o.queue, Clients: o.clients, Count: o.count, Duration: o.duration,
			Size: o.size, Groups: o.groups, Prefill: o.prefill, Rate: o.rate, MaxReceiveCount: o.maxReceives}
		if s != "depth" {
			runs = append(runs, cfg)
			continue
		}
		for _, d := range o.depths {
			cfg.Prefill = d
			runs = append(runs, cfg)
		}
	}
	if slices.Contains(scenarios, "queues") {
		if err := runQueuesBench(ctx, o, client, stdout, stderr); err != nil {
			return err
		}
	}
	var results []bench.Result
	failed := false
	for _, cfg := range runs {
		s := cfg.Scenario
		live := o.progress && !o.json
		if live {
			cfg.Progress = func(done int64) { fmt.Fprintf(stderr, "\r%-14s %d messages", s, done) }
		}
		if s == "mixed" && cfg.Rate <= 0 {
			probe := cfg
			probe.Scenario, probe.Count, probe.Duration = "send", 0, 5*time.Second
			res, err := bench.Run(ctx, client, probe)
			if live {
				fmt.Fprint(stderr, "\r\033[K")
			}
			if err != nil {
				return fmt.Errorf("mixed: measuring the send maximum: %w", err)
			}
			res.Scenario = "send (maximum, for mixed)"
			results = append(results, res)
			failed = failed || !res.OK()
			cfg.Rate = max(1, int(res.PerSecond/2))
			if o.json {
				b, _ := json.Marshal(res)
				fmt.Fprintln(stdout, string(b))
			}
		}
		res, err := bench.Run(ctx, client, cfg)
		if live {
			fmt.Fprint(stderr, "\r\033[K")
		}
		if err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
		if !res.OK() {
			failed = true
		}
		if o.json {
			b, _ := json.Marshal(res)
			fmt.Fprintln(stdout, string(b))
		}
		results = append(results, res)
	}
	if !o.json && len(runs) > 0 {
		printBenchTable(stdout, results)
	}
	if failed {
		return &exitError{code: 1, err: fmt.Errorf("a run had errors, lost or duplicated messages")}
	}
	return nil
}

func printBenchTable(w io.Writer, results []bench.Result) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tmsgs/s\tp50\tp99\tp99.9\terrors\tlost\tdups\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%s\t%d\t%d\t%d\t\n", r.Scenario, r.PerSecond,
			roundDur(r.P50), roundDur(r.P99), roundDur(r.P999), r.Errors, r.Lost, r.Duplicates)
	}
	tw.Flush()
	for _, r := range results {
		if r.SendPerSecond > 0 {
			fmt.Fprintf(w, "%s: its send phase ran at %.0f msgs/s\n", r.Scenario, r.SendPerSecond)
		}
		if r.DeliveriesPerSecond > 0 && r.Deliveries != r.Messages {
			fmt.Fprintf(w, "%s: %.0f deliveries/s to its SQS subscriptions\n", r.Scenario, r.DeliveriesPerSecond)
		}
	}
	var depths []bench.Result
	for _, r := range results {
		if r.Skipped > 0 {
			fmt.Fprintf(w, "%s: %d sends skipped: the endpoint did not keep up with the rate\n", r.Scenario, r.Skipped)
		}
		if strings.HasPrefix(r.Scenario, "depth=") {
			depths = append(depths, r)
		}
	}
	if len(depths) > 1 && depths[0].PerSecond > 0 {
		first, last := depths[0], depths[len(depths)-1]
		fmt.Fprintf(w, "depth: %s ran at %.2fx the rate of %s\n", strings.TrimSuffix(last.Scenario, " receive+delete"),
			last.PerSecond/first.PerSecond, strings.TrimSuffix(first.Scenario, " receive+delete"))
	}
	for _, r := range results {
		if r.FirstError != "" {
			fmt.Fprintf(w, "%s: first error: %s\n", r.Scenario, r.FirstError)
		}
	}
}

func roundDur(d time.Duration) time.Duration {
	switch {
	case d > time.Second:
		return d.Round(time.Millisecond)
	case d > time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

// rawBenchClient returns a raw client for sdk's endpoint that signs (when
// sign is set) with sdk's credentials and region.
func rawBenchClient(sdk *sqs.Client, conns int, sign bool) *bench.RawClient {
	opts := sdk.Options()
	endpoint := aws.ToString(opts.BaseEndpoint)
	if endpoint == "" {
		endpoint = "https://sqs." + opts.Region + ".amazonaws.com"
	}
	c := bench.NewRawClient(endpoint, 4*conns+8) // mixed runs four producers per client
	if !sign {
		return c
	}
	signer := v4.NewSigner()
	signFor := func(service string) func(ctx context.Context, r *http.Request, body []byte) error {
		return func(ctx context.Context, r *http.Request, body []byte) error {
			creds, err := opts.Credentials.Retrieve(ctx)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(body)
			return signer.SignHTTP(ctx, creds, r, hex.EncodeToString(sum[:]), service, opts.Region, time.Now())
		}
	}
	c.Sign, c.SignSNS = signFor("sqs"), signFor("sns")
	return c
}
