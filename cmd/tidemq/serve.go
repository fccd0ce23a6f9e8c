package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/backup"
	"github.com/tidemq/tidemq/internal/ratelog"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/topology"
)

type serveOptions struct {
	listen          string
	dataDir         string
	inMemory        bool
	store           string
	accountID       string
	region          string
	publicURL       string
	snsSign         string
	auth            bool
	credentials     string
	credentialsFile string
	logLevel        string
	logFormat       string
	shutdownTimeout time.Duration
	alarms          alarmOptions
	triggers        triggerOptions
	cluster         clusterOptions
	dataDirSet      bool // --data-dir (or its variable) was given
	config          string
	configParams    []string
	noLint          bool
	pprofListen     string
	door            doorOptions
	access          accessOptions // permissions and the audit log (serve_authz.go)
	// truncateCorruptWAL opens a store whose last write-ahead log is
	// corrupt before its end, dropping what follows the damage.
	truncateCorruptWAL bool
	// regions are the regions served besides --region (--regions): AWS's
	// when empty, any well-formed name with "any".
	regions []string
	// secretFlags are the flags given on the command line with a password
	// or secret in them (warned about: other users see them in ps).
	secretFlags []string
	// backupDir is --backup-dir: where online backups go ("": off);
	// backupWithoutAuth lets unsigned requests ask for one.
	backupDir         string
	backupWithoutAuth bool
	// minFreeDiskMiB is --min-free-disk (serve_disk.go).
	minFreeDiskMiB int64
	// maxQueues is --max-queues (serve_maxqueues.go); 0: no limit.
	maxQueues int
	// maxQueueBytes is --max-queue-bytes (engine.Options.MaxQueueBytes,
	// postgres.Options.MaxQueueBytes).
	maxQueueBytes int64
	// maxMemoryMiB is --max-memory (serve_memory.go); 0: off.
	maxMemoryMiB int64
}

func newServeCommand() *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the tidemq server",
		Long: `Run the tidemq server: the SQS API (AWS JSON 1.0 and Query) and the SNS
subset (Query; topics delivering to queues) on --listen, with
GET /health for probes, GET /metrics for Prometheus, GET /tidemq/alarms
for the built-in alarms (see 'tidemq alarms') and the web console at
/console/.

State is kept durably in --data-dir (Pebble, fsync before every answer). With
--in-memory nothing is written to disk and everything is lost when the process
ends. With --store postgres://user@host/db the queues are kept in PostgreSQL,
which several tidemq nodes share with everything else (topics, subscriptions,
the SNS outbox, triggers; --data-dir is not used): one node at a time, holding
a lease (--lease-ttl), runs the triggers, sends alarm notifications and
redelivers what stopped nodes left in the SNS outbox.

--config FILE applies a tidemq.yaml or CloudFormation/SAM template at start
(see 'tidemq apply'), after linting it (see 'tidemq lint'): an error finding is
logged and stops the server before it opens the data directory; warnings are
logged and do not stop it. --no-lint skips the check.

Without --auth, requests are not authenticated: any access key and secret are
accepted, as with other local SQS emulators; only requests addressed to an IP
address, localhost or --allowed-hosts are answered, and browsers cannot reach
the server from other sites. With --auth, every route (SQS, SNS, /tidemq/...,
/metrics, /health, the console's data) needs a valid AWS Signature Version 4
made with one of the configured credentials (--credentials or
--credentials-file); tidemq's own commands sign for the "tidemq" service, and
the console signs in the browser with a key typed into its sign-in page.
A --credentials-file in the principals form (see docs/principals.example.yaml)
also gives each key a principal and an IAM policy: every call is then
authorized as AWS authorizes it, queue and topic policies included, refusals and admin
changes go to --audit-log, and the file is reloaded when it changes.
--auth-exempt health,metrics opens the two probes. --tls-cert and --tls-key serve HTTPS. The README's "Security"
section has the threat model.

Every flag can also be set with an environment variable, shown in brackets.`,
		Example: `  tidemq serve
  tidemq serve --in-memory --listen 0.0.0.0:9324
  tidemq serve --store postgres://tidemq@db.internal/tidemq --listen 0.0.0.0:9324
  TIDEMQ_DATA_DIR=/var/lib/tidemq tidemq serve --auth --credentials-file /etc/tidemq/credentials
  tidemq serve --auth --credentials-file creds --auth-exempt health,metrics --tls-cert cert.pem --tls-key key.pem`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.dataDirSet = cmd.Flags().Changed("data-dir")
			o.secretFlags = secretsOnCommandLine(cmd.Flags(), o)
			return runServe(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", "127.0.0.1:9324", "address to listen on")
	f.StringVar(&o.dataDir, "data-dir", "./tidemq-data", "directory of the durable store")
	f.BoolVar(&o.inMemory, "in-memory", false, "keep everything in memory (lost on exit)")
	f.StringVar(&o.backupDir, "backup-dir", "", "directory that online backups (POST /tidemq/backup, 'tidemq backup') are written into, each a new directory directly under it (default: online backups off)")
	f.BoolVar(&o.backupWithoutAuth, "backup-without-auth", false, "allow online backups without --auth (anyone who reaches the server can then copy every message into --backup-dir)")
	f.Int64Var(&o.minFreeDiskMiB, "min-free-disk", 128, "refuse new sends (ServiceUnavailable, retryable) while the data directory's file system has fewer MiB free; receives and deletes go on (0: off)")
	f.IntVar(&o.maxQueues, "max-queues", 0, "refuse CreateQueue of a new queue (OverLimit) once the server holds this many queues (0: no limit)")
	f.Int64Var(&o.maxQueueBytes, "max-queue-bytes", 0, "refuse sends to a queue (RequestThrottled, retryable) while its messages add up to this many bytes; receives, deletes and dead-letter moves go on (0: no limit)")
	f.Int64Var(&o.maxMemoryMiB, "max-memory", 0, "refuse new sends (ServiceUnavailable, retryable) while the server's resident memory is above this many MiB; receives and deletes go on (0: off)")
	f.BoolVar(&o.truncateCorruptWAL, "truncate-corrupt-wal", false, "open --data-dir even if its last write-ahead log has a corrupt record followed by valid ones, dropping those (by default the server refuses to start and names the log and offset)")
	o.cluster.addFlags(f)
	f.StringVar(&o.store, "store", "pebble", "where queues, topics and triggers live: pebble (in --data-dir) or postgres://user[:password]@host[:port]/db[?sslmode=...] shared by several nodes")
	f.StringVar(&o.accountID, "account-id", tidemq.DefaultAccountID, "AWS account id in queue URLs and ARNs")
	f.StringVar(&o.region, "region", "us-east-1", "home region: the region of unsigned requests and of queues named without one (a signed request works on its credential scope's region)")
	f.StringSliceVar(&o.regions, "regions", nil, "the regions a signed request may name besides --region, e.g. eu-west-1,dev-2 (default: the regions AWS serves; \"any\": any region name, each a namespace of queues)")
	f.StringVar(&o.publicURL, "public-url", "", "base URL of queue URLs, {region} replaced by the queue's region, e.g. http://sqs.{region}.localhost:9324 (default: from each request's Host)")
	f.BoolVar(&o.auth, "auth", false, "verify AWS Signature V4 against the configured credentials")
	f.StringVar(&o.credentials, "credentials", "", "credentials for --auth, as AKID:SECRET[,AKID:SECRET...]")
	f.StringVar(&o.credentialsFile, "credentials-file", "", "credentials for --auth: an AWS shared-credentials file, AKID:SECRET lines (each key may do everything), or a principals file giving each key an IAM policy; reloaded when it changes")
	f.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.StringVar(&o.logFormat, "log-format", "text", "log format: text or json")
	f.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long to wait for requests to finish on SIGTERM")
	o.alarms.addFlags(f)
	o.triggers.addFlags(f)
	o.door.addFlags(f)
	o.access.addFlags(f)
	f.StringVar(&o.config, "config", "", "a tidemq.yaml or CloudFormation/SAM template applied at start: queues, topics, triggers, alarms (see 'tidemq apply')")
	f.BoolVar(&o.noLint, "no-lint", false, "apply --config without linting it first (by default an error finding stops the server before it opens the data directory; warnings are logged)")
	f.StringArrayVar(&o.configParams, "config-param", nil, "template parameter of --config as NAME=VALUE (repeatable; overrides its default; the environment variable holds one)")
	f.StringVar(&o.snsSign, "sns-sign", "all", "which SNS notification envelopes are signed: all (as AWS) or http-only (envelopes delivered to SQS queues go unsigned: faster fan-out, for consumers that never verify signatures)")
	f.StringVar(&o.pprofListen, "pprof-listen", "", "serve Go's /debug/pprof profiling endpoints on this address, e.g. 127.0.0.1:6060 (off by default)")
	bindEnv(cmd)
	return cmd
}

func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level must be debug, info, warn or error, not %q", level)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		// Durations as "1.5s", as the text format writes them, rather
		// than the JSON handler's integer nanoseconds.
		opts.ReplaceAttr = func(_ []string, a slog.Attr) slog.Attr {
			if a.Value.Kind() == slog.KindDuration {
				return slog.String(a.Key, a.Value.Duration().String())
			}
			return a
		}
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json, not %q", format)
}

// regionFilter is --regions as sqs.Config.Regions: nil (AWS's regions)
// when it is not given.
func (o *serveOptions) regionFilter() func(string) bool {
	if len(o.regions) == 0 {
		return nil
	}
	set := map[string]bool{}
	for _, r := range o.regions {
		if r == "any" {
			return tidemq.ValidRegion
		}
		set[r] = true
	}
	return func(r string) bool { return set[r] }
}

// accountIDPattern and regionPattern keep queue URLs and ARNs well formed.
var (
	accountIDPattern = regexp.MustCompile(`^[0-9]{12}$`)
	regionPattern    = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
)

func runServe(ctx context.Context, o *serveOptions) error {
	log, err := newLogger(os.Stderr, o.logLevel, o.logFormat)
	if err != nil {
		return err
	}
	// A failing dependency fails every request alike: its warnings and
	// errors are logged at a bounded rate (internal/ratelog).
	log = slog.New(ratelog.New(log.Handler(), ratelog.Options{Burst: 10}))
	if !accountIDPattern.MatchString(o.accountID) {
		return fmt.Errorf("--account-id must be 12 digits, like 000000000000, not %q", o.accountID)
	}
	if !regionPattern.MatchString(o.region) {
		return fmt.Errorf("--region must be a region name like us-east-1, not %q", o.region)
	}
	if o.backupDir != "" {
		abs, err := filepath.Abs(o.backupDir)
		if fi, serr := os.Stat(abs); err != nil || serr != nil || !fi.IsDir() {
			return fmt.Errorf("--backup-dir %s must be an existing directory", o.backupDir)
		}
		o.backupDir = abs
	}
	for _, f := range o.secretFlags {
		log.Warn("a secret is on the command line, where other users of this machine can read it (ps, /proc): "+
			"use the environment ($"+envName(f)+") or a file instead", "flag", "--"+f)
	}
	for _, r := range o.regions {
		if r != "any" && !regionPattern.MatchString(r) {
			return fmt.Errorf("--regions: %q is not a region name like eu-west-1", r)
		}
	}
	open, err := o.door.exempt(o.auth)
	if err != nil {
		return err
	}
	if err := o.door.check(); err != nil {
		return err
	}
	if o.triggers.allowCommands && !o.auth && !isLoopback(o.listen) {
		return fmt.Errorf("--allow-trigger-commands lets whoever reaches the admin API run programs: on %s it needs --auth", o.listen)
	}
	if o.publicURL != "" && !strings.HasPrefix(o.publicURL, "http://") && !strings.HasPrefix(o.publicURL, "https://") {
		return fmt.Errorf("--public-url must start with http:// or https://, got %q", o.publicURL)
	}
	if len(o.configParams) > 0 && o.config == "" {
		return errors.New("--config-param gives parameters to a --config template, and there is no --config")
	}
	if o.inMemory && o.dataDirSet {
		return errors.New("--in-memory keeps nothing on disk: drop --data-dir (or $TIDEMQ_DATA_DIR), or drop --in-memory")
	}
	if err := o.checkStore(); err != nil {
		return err
	}
	if isPostgresStore(o.store) {
		if err := o.cluster.check(); err != nil {
			return err
		}
	}
	var config *topology.Config // read and linted before anything is opened
	if o.config != "" {
		if config, err = loadConfigFile(o.config, o.region, o.accountID, o.configParams, !o.noLint, log); err != nil {
			return err
		}
	}
	if abs, err := filepath.Abs(o.dataDir); err == nil {
		o.dataDir = abs // so the log says where the data really is
	}
	s := &tidemqServer{o: o, log: log, open: open, config: config}
	if err := s.start(ctx); err != nil {
		return errors.Join(err, s.Close())
	}
	return s.serve(ctx) // serve_server.go: the parts, and the order they stop in
}

// backupHandler answers POST /tidemq/backup: a checkpoint of the local
// store, which holds the queues unless they are in PostgreSQL. Then a
// checkpoint would hold no queue and no message while looking like a
// backup, so it is refused.
func (o *serveOptions) backupHandler(store storage.Store, log *slog.Logger) http.Handler {
	if isPostgresStore(o.store) {
		return backup.Refuse(tidemq.Errorf(tidemq.ErrQueuesInPostgreSQL,
			"this server keeps its queues in PostgreSQL (--store): a copy of its local store would hold no queue and no message. "+
				"Back up the database (pg_dump, or the database's own backups); the node's topics and triggers (--data-dir) can be "+
				"backed up with the server stopped: tidemq backup --data-dir DIR DEST"))
	}
	return backup.Handler(checkpointer(store), backup.Options{Dir: o.backupDir, Unauthenticated: !o.auth,
		AllowUnauthenticated: o.backupWithoutAuth, Logger: log})
}

// checkpointer is the store's online backup, or nil for a store that has
// none (--in-memory).
func checkpointer(store storage.Store) storage.Checkpointer {
	if cp, ok := store.(storage.Checkpointer); ok {
		return cp
	}
	return nil
}
