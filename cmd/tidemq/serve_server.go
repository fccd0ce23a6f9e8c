package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/api/frontdoor"
	"github.com/tidemq/tidemq/api/sqs"
	"github.com/tidemq/tidemq/console"
	"github.com/tidemq/tidemq/internal/server"
	topicstore "github.com/tidemq/tidemq/sns"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/diskguard"
	"github.com/tidemq/tidemq/topology"
)

// tidemqServer is `tidemq serve` put together: each part is a field,
// opened by start in the order of the table in parts, and Close closes
// what was started in the reverse order (litestream's
// cmd/litestream/replicate.go shape). This file is where the server is
// assembled and where its stopping order is decided; the serve_*.go files
// beside it open the parts and nothing else holds the server.
type tidemqServer struct {
	o   *serveOptions
	log *slog.Logger

	open map[string]bool // the routes --auth-exempt opens
	// config is --config, read and linted before anything is opened.
	config *topology.Config

	auth     sqs.Authenticator // nil without --auth
	door     *frontdoor.Door
	http     *frontdoor.Server
	cluster  *cluster        // nil unless --store postgres
	store    storage.Store   // the local store, or the cluster's KV
	shared   *storage.Shared // the server's handle on the store, shared among the parts
	broker   tidemq.Broker   // wrapped by the disk and memory guards and --max-queues
	disk     *diskguard.Guard
	mem      *memGuard
	obs      *observability
	topics   *topicstore.Service
	triggers *triggers
	console  *console.Console

	stops []stop // what Close undoes, in the order started
}

// part is one component of the server: start opens it and returns how it
// stops (nil: nothing to stop).
type part struct {
	name  string
	start func(ctx context.Context) (stop func() error, err error)
}

// parts is the server, in the order start opens it; Close stops the parts
// in the reverse order. Read down for start-up, up for shutdown:
//
//	part           opens                                 stops (in Close, bottom up)
//	audit          --audit-log                           closed once nothing can be refused
//	credentials    --credentials-file and its watcher    the watcher stops
//	door           the front door and HTTP server, built (TLS files read before the store is touched)
//	cluster        PostgreSQL pool, node lease           gives the lease up, closes the pool
//	store          the local store or the cluster's KV   the server's handle; the last one closes it
//	broker         the engine or the PostgreSQL broker   closes the queues
//	observability  metrics, alarms                       stops the alarm evaluator and webhooks
//	topics         SNS                                   stops deliveries while the broker is open
//	http           the HTTP server's stop                answers long polls (Drain), finishes requests
//	pprof          --pprof-listen                        closes the profiling listener
//	triggers       the trigger manager                   ends the polls, waits for invocations
//	leading        the leader lease's jobs               hands the leader lease over
//	config         --config applied                      -
//	console        its API                               ends its redrive jobs between two messages
//	transports     SQS, SNS and admin routes mounted     -
//
// The HTTP server listens once start is done (serve), every route mounted.
// Its stop comes after the triggers' in Close: it drains the broker, and
// the triggers' pollers must be gone by then.
func (s *tidemqServer) parts() []part {
	return []part{
		{"audit", s.startAudit},
		{"credentials", s.startCredentials},
		{"door", s.startDoor},
		{"cluster", s.startCluster},
		{"store", s.startStore},
		{"broker", s.startBroker},
		{"observability", s.startObservability},
		{"topics", s.startTopics},
		{"http", s.startHTTP},
		{"pprof", s.startPprof},
		{"triggers", s.startTriggers},
		{"leading", s.startLeading},
		{"config", s.applyConfig},
		{"console", s.startConsole},
		{"transports", s.mount},
	}
}

type stop struct {
	name  string
	close func() error
}

// start opens the parts in the order of parts. On an error the caller
// calls Close, which stops what was started.
func (s *tidemqServer) start(ctx context.Context) error {
	for _, p := range s.parts() {
		closer, err := p.start(ctx)
		if err != nil {
			return err
		}
		if closer != nil {
			s.stops = append(s.stops, stop{p.name, closer})
		}
	}
	return nil
}

// Close stops every part started, in the reverse order of start. A second
// Close does nothing.
func (s *tidemqServer) Close() error {
	var errs []error
	for i := len(s.stops) - 1; i >= 0; i-- {
		st := s.stops[i]
		if err := st.close(); err != nil {
			errs = append(errs, fmt.Errorf("close %s: %w", st.name, err))
		}
	}
	s.stops = nil
	return errors.Join(errs...)
}

// nothing is the stop of a part whose stop returns no error.
func nothing(f func()) func() error { return func() error { f(); return nil } }

func (s *tidemqServer) startAudit(context.Context) (func() error, error) {
	if err := s.o.openAudit(s.log); err != nil {
		return nil, err
	}
	return s.o.access.closeAudit, nil
}

func (s *tidemqServer) startCredentials(ctx context.Context) (func() error, error) {
	a, err := s.o.openCredentials(ctx, s.log)
	if err != nil {
		return nil, err
	}
	if a != nil {
		s.auth = a
	}
	return nothing(s.o.access.stopWatching), nil
}

func (s *tidemqServer) startDoor(context.Context) (func() error, error) {
	o := s.o
	s.door = frontdoor.New(frontdoor.Config{Auth: adminAuth(s.auth), Guard: o.access.guard(), MaxBody: sqs.MaxRequestBodyBytes,
		MaxBodyMemory: o.door.maxBodyMemMiB << 20, AllowedHosts: o.door.hosts(o.publicURL, o.listen), Logger: s.log})
	var err error
	s.http, err = o.door.server(s.door, s.log)
	return nil, err
}

func (s *tidemqServer) startCluster(context.Context) (func() error, error) {
	if !isPostgresStore(s.o.store) {
		return nil, nil
	}
	var err error
	if s.cluster, err = s.o.openCluster(s.log); err != nil {
		return nil, err
	}
	return nothing(s.cluster.close), nil
}

// startStore opens the store: the cluster's KV, or the node's own. The
// server holds the first handle; the broker, the topic service and the
// triggers each take and close their own, and the last handle closed
// closes the store.
func (s *tidemqServer) startStore(context.Context) (func() error, error) {
	if s.cluster != nil {
		s.store = s.cluster.kv
	} else {
		var err error
		if s.store, err = s.o.openLocalStore(s.log); err != nil {
			return nil, err
		}
	}
	s.shared = storage.Share(s.store)
	return s.shared.Close, nil
}

func (s *tidemqServer) startBroker(context.Context) (func() error, error) {
	o, log := s.o, s.log
	h := s.shared.Share()
	eng, err := o.openBroker(h, s.cluster, log)
	if err != nil {
		_ = h.Close() // a second Close of a handle does nothing
		return nil, err
	}
	// Loading the state (100,000 queue records are 100,000 JSON decodes)
	// leaves garbage the runtime would return to the system only slowly:
	// return it now, so that an idle server's RSS is what it holds.
	debug.FreeOSMemory()
	eng = o.access.bindQueues(eng, o.region) // the queue policies, read from the broker itself
	eng, s.disk = o.guardDisk(eng, log)
	eng, s.mem = o.guardMemory(eng, log)
	if o.maxQueues > 0 {
		eng = newQueueCapped(eng, o.maxQueues)
	}
	s.broker = eng
	return eng.Close, nil
}

func (s *tidemqServer) startObservability(context.Context) (func() error, error) {
	var err error
	if s.obs, err = startObservability(s.broker, s.store, s.o, s.log); err != nil {
		return nil, err
	}
	if s.disk != nil {
		s.obs.metrics.Registry().MustRegister(diskCollectors(s.disk)...)
	}
	if s.mem != nil {
		s.obs.metrics.Registry().MustRegister(memoryCollectors(s.mem)...)
	}
	if s.obs.alarms != nil {
		s.obs.alarms.SetMarks(guardMarks(s.mem, s.disk))
	}
	return nothing(s.obs.stop), nil
}

func (s *tidemqServer) startTopics(context.Context) (func() error, error) {
	var err error
	if s.topics, err = openTopics(s.obs.metrics.Broker(s.broker), s.shared.Share(), s.o, s.cluster, s.log); err != nil {
		return nil, err
	}
	s.o.access.bindTopics(s.topics)
	s.obs.metrics.RegisterTopics(s.topics.Stats)
	return nothing(func() { _ = s.topics.Close() }), nil
}

// startHTTP registers the HTTP server's stop: the server was built by the
// door part and listens once every route is mounted (serve); its stop
// answers the long polls and lets the requests in flight finish.
func (s *tidemqServer) startHTTP(context.Context) (func() error, error) {
	return func() error {
		s.log.Info("shutting down: answering long polls, finishing requests")
		s.broker.Drain()
		sctx, cancel := context.WithTimeout(context.Background(), s.o.shutdownTimeout)
		defer cancel()
		if err := s.http.Shutdown(sctx); err != nil {
			s.log.Warn("requests still running at the shutdown timeout", "err", err)
		}
		return nil
	}, nil
}

func (s *tidemqServer) startPprof(context.Context) (func() error, error) {
	if s.o.pprofListen == "" {
		return nil, nil
	}
	stopPprof, err := startPprof(s.o.pprofListen, s.log)
	if err != nil {
		return nil, err
	}
	return nothing(stopPprof), nil
}

func (s *tidemqServer) startTriggers(context.Context) (func() error, error) {
	o := s.o
	var err error
	if s.triggers, err = startTriggers(s.cluster.leaderBroker(s.broker), s.shared.Share(), s.obs.metrics.Registry(), o, s.cluster.nodeID(), s.log); err != nil {
		return nil, err
	}
	o.access.triggers = s.triggers.m
	if s.obs.alarms != nil {
		s.obs.alarms.SetTriggers(s.triggers.m.Stats)
	}
	return nothing(func() { s.triggers.stop(o.shutdownTimeout) }), nil
}

// startLeading runs the leader lease's jobs (--store postgres).
func (s *tidemqServer) startLeading(context.Context) (func() error, error) {
	if s.cluster == nil {
		return nil, nil
	}
	s.cluster.lead(s.triggers.m, s.obs.leaderHook, s.topics)
	s.cluster.watch(s.triggers.m, s.topics)
	return nothing(s.cluster.stopLeading), nil
}

func (s *tidemqServer) applyConfig(ctx context.Context) (func() error, error) {
	if s.config == nil {
		return nil, nil
	}
	ct := configTargets{broker: s.broker, topics: s.topics, triggers: s.triggers.m, alarms: s.obs.alarms}
	return nil, applyConfig(ctx, ct, s.config, s.log)
}

// protocols are the SQS and SNS protocols' options, shared by the
// transports and the console's in-process SQS handler.
func (s *tidemqServer) protocols() server.ProtocolOptions {
	o := s.o
	return server.ProtocolOptions{Broker: s.obs.metrics.Broker(s.broker), Topics: s.topics,
		Region: o.region, AccountID: o.accountID, PublicURL: o.publicURL, Auth: s.auth, Authorizer: o.access.authorizer, Logger: s.log,
		Observe: s.obs.metrics.ObserveRequest, Regions: o.regionFilter()}
}

// startConsole builds the console; its stop ends its redrive jobs while
// the broker is still open.
func (s *tidemqServer) startConsole(context.Context) (func() error, error) {
	s.console = newConsole(s.obs.metrics.Broker(s.broker), s.obs, s.topics, server.ConsoleSQS(s.protocols()), s.o)
	return s.console.Close, nil
}

// mount puts every part's routes behind the front door: the transports
// (SQS, SNS) and the admin routes.
func (s *tidemqServer) mount(context.Context) (func() error, error) {
	o, log := s.o, s.log
	server.Mount(s.door, server.Routes{
		Health:        server.Health(s.broker, o.auth && !s.open["health"], log),
		Metrics:       s.obs.metrics.Handler(),
		Queues:        s.obs.queuesHandler,
		Alarms:        s.obs.alarmsHandler,
		Trigger:       s.triggers.handler,
		Backup:        o.backupHandler(s.store, log),
		ConsoleAssets: console.Assets(),
		ConsoleAPI:    s.console.API(),
		Protocols:     server.Protocols(s.protocols()),
	}, s.open)
	return nil, nil
}

// serve listens and answers until ctx ends or SIGINT/SIGTERM, then
// closes the server.
func (s *tidemqServer) serve(ctx context.Context) error {
	o, log := s.o, s.log
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return errors.Join(fmt.Errorf("listen on %s: %w", o.listen, err), s.Close())
	}
	log.Info("tidemq listening", "addr", ln.Addr().String(), "tls", s.http.TLS(), "store", o.storeDescription(), "auth", o.auth,
		"region", o.region, "account", o.accountID, "version", currentBuild().Version)
	if !o.auth && !isLoopback(o.listen) {
		log.Warn("listening beyond this machine without --auth: anyone who can reach " + o.listen + " can read, send and delete every message")
	}
	ctx, cancel := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- s.http.Serve(ln) }()
	select {
	case err := <-errc:
		return errors.Join(fmt.Errorf("server stopped: %w", err), s.Close())
	case <-ctx.Done():
	}
	if err := s.Close(); err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}
