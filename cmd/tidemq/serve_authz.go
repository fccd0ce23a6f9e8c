package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/api/frontdoor"
	"github.com/tidemq/tidemq/api/sigv4"
	"github.com/tidemq/tidemq/audit"
	"github.com/tidemq/tidemq/authz"
	"github.com/tidemq/tidemq/backup"
	"github.com/tidemq/tidemq/console"
	topicstore "github.com/tidemq/tidemq/sns"
	"github.com/tidemq/tidemq/trigger"
)

// accessOptions are the serve flags of permissions and auditing (--auth's
// second question: not only who signed, but whether they may), and what
// runServe builds of them.
type accessOptions struct {
	auditLog     string
	auditMaxMiB  int64
	auditKeep    int
	reloadPeriod time.Duration
	policyTTL    time.Duration

	// Built by open; nil without --auth.
	store      *authz.Store
	authorizer *authz.Authorizer
	audit      *audit.Log
	triggers   *trigger.Manager // set once the triggers are open
	broker     tidemq.Broker    // set by bindQueues
	// stopWatch ends the credentials file's watcher, watching is closed
	// once it has (close does both: the watcher lives as long as the
	// server, not as runServe's context).
	stopWatch context.CancelFunc
	watching  chan struct{}
}

func (a *accessOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&a.auditLog, "audit-log", "", "with --auth, the audit log (JSON lines): every admin change and every refused call (default: audit.log in --data-dir; none with --in-memory or --store postgres:// unless given)")
	f.Int64Var(&a.auditMaxMiB, "audit-log-max-mib", audit.DefaultMaxBytes>>20, "rotate the audit log when it holds this many MiB")
	f.IntVar(&a.auditKeep, "audit-log-keep", audit.DefaultKeep, "rotated audit logs kept (audit.log.1 ...)")
	f.DurationVar(&a.policyTTL, "policy-cache", time.Second, "with --auth, how long a queue's policy, once read, decides calls without being read again: a change through this node applies at once, another node's within this (0: read on every call)")
	f.DurationVar(&a.reloadPeriod, "credentials-reload", 2*time.Second, "how often --credentials-file is checked for changes (reloaded when its contents change)")
}

// openAudit opens the audit log under --auth: --audit-log, or audit.log in
// --data-dir; none with --in-memory or --store postgres unless named.
func (o *serveOptions) openAudit(log *slog.Logger) error {
	a := &o.access
	if !o.auth {
		if a.auditLog != "" {
			return errors.New("--audit-log records refused calls and admin changes, and there is no --auth")
		}
		return nil
	}
	path := a.auditLog
	if path == "" && !o.inMemory && !isPostgresStore(o.store) {
		// Next to the data (created as the store creates it, for this
		// user only: the store may not have made it yet). Nodes sharing
		// PostgreSQL name theirs with --audit-log.
		if err := os.MkdirAll(o.dataDir, 0o700); err != nil {
			return fmt.Errorf("audit log: %w", err)
		}
		path = filepath.Join(o.dataDir, "audit.log")
	}
	if path == "" {
		return nil
	}
	var err error
	a.audit, err = audit.Open(path, a.auditMaxMiB<<20, a.auditKeep, log)
	return err
}

// openCredentials builds the authenticator of the protocols and, under
// --auth, the principals' store (watched for changes until ctx ends or
// stopWatching) and the authorizer, which writes to the audit log
// (openAudit first). Without --auth it returns nil and builds nothing:
// every call is allowed, as in the quick start.
func (o *serveOptions) openCredentials(ctx context.Context, log *slog.Logger) (*authz.Authenticator, error) {
	if !o.auth {
		if o.credentials != "" || o.credentialsFile != "" {
			return nil, errors.New("credentials are given but --auth is off: add --auth to verify signatures")
		}
		return nil, nil
	}
	var extra sigv4.Credentials
	if o.credentials != "" {
		c, err := sigv4.ParseCredentialPairs(o.credentials)
		if err != nil {
			return nil, fmt.Errorf("--credentials: %w", err)
		}
		extra = c
	}
	store, err := authz.NewStore(o.credentialsFile, o.accountID, extra, log)
	if err != nil {
		if o.credentialsFile != "" && o.credentials == "" {
			return nil, fmt.Errorf("--credentials-file: %w", err)
		}
		return nil, err
	}
	a := &o.access
	a.store = store
	a.authorizer = &authz.Authorizer{Store: store, Account: o.accountID, Region: o.region, Audit: a.audit, Logger: log}
	if a.reloadPeriod > 0 && store.Path() != "" {
		wctx, stop := context.WithCancel(ctx)
		a.stopWatch, a.watching = stop, make(chan struct{})
		go func() {
			defer close(a.watching)
			store.Watch(wctx, a.reloadPeriod)
		}()
	}
	return &authz.Authenticator{Store: store, Services: []string{"sqs"}}, nil
}

// bindQueues lets the authorizer read the queues' policies, and returns
// the broker the server goes on with: b, telling the authorizer's policy
// cache of every change of a queue's attributes (policyForgetting).
func (a *accessOptions) bindQueues(b tidemq.Broker, region string) tidemq.Broker {
	if a.authorizer == nil {
		return b
	}
	a.broker = b
	a.authorizer.QueuePolicyTTL = a.policyTTL
	a.authorizer.QueuePolicy = func(ctx context.Context, queue string) (string, error) {
		attrs, err := b.GetQueueAttributes(ctx, tidemq.GetQueueAttributesParams{Queue: queue, Names: []string{tidemq.AttrPolicy}})
		if err != nil {
			return "", err
		}
		return attrs[tidemq.AttrPolicy], nil
	}
	return &policyForgetting{Broker: b, a: a.authorizer, region: region}
}

// bindTopics lets the authorizer read the topics' policies (AWS's default
// topic policy for a topic without one).
func (a *accessOptions) bindTopics(topics *topicstore.Service) {
	if a.authorizer == nil || topics == nil {
		return
	}
	a.authorizer.TopicPolicy = func(_ context.Context, arn string) (string, error) { return topics.TopicPolicy(arn) }
}

// guard is the door's Guard: nil without --auth.
func (a *accessOptions) guard() func(r *http.Request, accessKey string) (func(int), error) {
	if a.authorizer == nil {
		return nil
	}
	return a.authorizer.Guard(authz.AdminOptions{
		TriggerQueue: func(name string) (string, bool) {
			if a.triggers == nil {
				return "", false
			}
			s, err := a.triggers.Get(name)
			if err != nil {
				return "", false
			}
			return s.Queue, true
		},
		DeadLetterSources: func(ctx context.Context, queue string) ([]string, error) {
			if a.broker == nil {
				return nil, tidemq.Errorf(tidemq.ErrServiceUnavailable, "The server is not ready yet.")
			}
			res, err := a.broker.ListDeadLetterSourceQueues(ctx, tidemq.ListDeadLetterSourceQueuesParams{Queue: queue})
			if err != nil {
				return nil, err
			}
			return res.Names, nil
		},
		TriggersPath: trigger.APIPath, ConsoleAPIPath: console.APIPath, BackupPath: backup.APIPath,
		QueuesPath: "/tidemq/queues", AlarmsPath: "/tidemq/alarms",
	})
}

// visible is the console's Visible: a queue is shown to whoever may read
// its attributes (as the ListQueueStats extension lists). nil without
// --auth.
func (a *accessOptions) visible() func(r *http.Request, queueARN string) bool {
	if a.authorizer == nil {
		return nil
	}
	return func(r *http.Request, queueARN string) bool {
		return a.authorizer.Allowed(r, frontdoor.AccessKey(r.Context()), "sqs:GetQueueAttributes", queueARN)
	}
}

// visibleTopic is the console's VisibleTopic: a topic is shown, with its
// subscriptions, to whoever may list them (sns:ListSubscriptionsByTopic,
// the topic's policy included). nil without --auth.
func (a *accessOptions) visibleTopic() func(r *http.Request, topicARN string) bool {
	if a.authorizer == nil {
		return nil
	}
	return func(r *http.Request, topicARN string) bool {
		return a.authorizer.Allowed(r, frontdoor.AccessKey(r.Context()), "sns:ListSubscriptionsByTopic", topicARN)
	}
}

// deliveryCheck is the topic service's DeliveryCheck: nil without --auth. With
// credentials in an original form it lets every delivery through (authz:
// Directory.Policies), so that an upgrade to --auth drops nothing.
func (a *accessOptions) deliveryCheck() func(ctx context.Context, topicARN, queueARN string) error {
	if a.authorizer == nil {
		return nil
	}
	return a.authorizer.DeliveryCheck
}

// stopWatching stops the credentials file's watcher, if it runs.
func (a *accessOptions) stopWatching() {
	if a.stopWatch != nil {
		a.stopWatch()
		<-a.watching
		a.stopWatch = nil
	}
}

// closeAudit closes the audit log, if one is open.
func (a *accessOptions) closeAudit() error {
	if a.audit == nil {
		return nil
	}
	return a.audit.Close()
}
