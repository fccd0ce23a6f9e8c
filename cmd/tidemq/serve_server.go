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
// started by start in the order below, and Close closes what was started
// in the reverse order (litestream's cmd/litestream/replicate.go shape).
// This file is where the server is assembled and where its stopping
// order is decided; the serve_*.go files open the parts.
//
//	start                               Close (reverse)
//	1 cluster   PostgreSQL, node lease  9 gives the node lease up, closes the pool
//	2 broker    the engine or Postgres  8 closes the queues (and its store share)
//	3 obs       metrics, alarms          7 stops the alarm evaluator and webhook
//	4 topics    SNS                      6 stops SNS deliveries before the broker goes
//	5 http      the front door           5 answers long polls (Drain), finishes requests
//	6 pprof     --pprof-listen           4 closes the profiling listener
//	7 triggers  the trigger manager      3 ends the polls, waits for invocations
//	8 leading   the leader lease's jobs  2 hands the leader lease over
//	9 console   (mounted with the routes) 1 ends its redrive jobs between two messages
//
// The HTTP server is registered before the triggers though it listens last
// (it needs the routes of every part): its Close drains the broker, and
// the triggers' pollers must be gone by then.
type tidemqServer struct {
	o   *serveOptions
	log *slog.Logger

	auth sqs.Authenticator
	open map[string]bool // the routes --auth-exempt opens
	// config is --config, read and linted before anything is opened.
	config *topology.Config

	door     *frontdoor.Door
	http     *frontdoor.Server
	cluster  *cluster        // nil unless --store postgres
	store    storage.Store   // the local store, or the cluster's KV
	shared   *storage.Shared // the store shared among the parts
	broker   tidemq.Broker   // wrapped by the disk and memory guards and --max-queues
	disk     *diskguard.Guard
	mem      *memGuard
	obs      *observability
	topics   *topicstore.Service
	triggers *triggers

	stops []stop // what Close undoes, in the order started
}

type stop struct {
	name  string
	close func() error
}

// started records that a part is running and how it stops.
func (s *tidemqServer) started(name string, close func() error) {
	s.stops = append(s.stops, stop{name, close})
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

// start opens and starts the parts. On an error the caller calls Close,
// which stops what was started.
func (s *tidemqServer) start(ctx context.Context) error {
	o, log := s.o, s.log
	var err error
	// 1. The store: the cluster's shared KV, or the node's own.
	if isPostgresStore(o.store) {
		if s.cluster, err = o.openCluster(log); err != nil {
			return err
		}
		s.started("cluster", func() error { s.cluster.close(); return nil }) // last: after every share of its KV is closed
		s.store = s.cluster.kv
	} else if s.store, err = o.openLocalStore(log); err != nil {
		return err
	}
	// 2. The broker. It takes the first share of the store; the topic
	// service and the triggers close their own, and the last closes the
	// store.
	s.shared = storage.Share(s.store)
	eng, err := o.openBroker(s.shared, s.cluster, log)
	if err != nil {
		s.store.Close()
		return err
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
	s.started("broker", eng.Close)
	// 3. Metrics and alarms.
	if s.obs, err = startObservability(eng, s.store, o, log); err != nil {
		return err
	}
	s.started("observability", func() error { s.obs.stop(); return nil })
	if s.disk != nil {
		s.obs.metrics.Registry().MustRegister(diskCollectors(s.disk)...)
	}
	if s.mem != nil {
		s.obs.metrics.Registry().MustRegister(memoryCollectors(s.mem)...)
	}
	if s.obs.alarms != nil {
		s.obs.alarms.SetMarks(guardMarks(s.mem, s.disk))
	}
	// 4. SNS.
	if s.topics, err = openTopics(s.obs.metrics.Broker(eng), s.shared.Share(), o, s.cluster, log); err != nil {
		return err
	}
	s.started("topics", func() error { s.topics.Close(); return nil })
	o.access.bindTopics(s.topics)
	s.obs.metrics.RegisterTopics(s.topics.Stats)
	// 5. The HTTP server: built already (runServe), it listens once every
	// route is mounted, below; its stop answers the long polls and lets
	// the requests in flight finish.
	s.started("http", func() error {
		log.Info("shutting down: answering long polls, finishing requests")
		eng.Drain()
		sctx, cancel := context.WithTimeout(context.Background(), o.shutdownTimeout)
		defer cancel()
		if err := s.http.Shutdown(sctx); err != nil {
			log.Warn("requests still running at the shutdown timeout", "err", err)
		}
		return nil
	})
	// 6. Profiling.
	if o.pprofListen != "" {
		stopPprof, err := startPprof(o.pprofListen, log)
		if err != nil {
			return err
		}
		s.started("pprof", func() error { stopPprof(); return nil })
	}
	// 7. Triggers.
	if s.triggers, err = startTriggers(s.cluster.leaderBroker(eng), s.shared.Share(), s.obs.metrics.Registry(), o, s.cluster.nodeID(), log); err != nil {
		return err
	}
	o.access.triggers = s.triggers.m
	s.started("triggers", func() error { s.triggers.stop(o.shutdownTimeout); return nil })
	if s.obs.alarms != nil {
		s.obs.alarms.SetTriggers(server.TriggerAlarmSnapshots(s.triggers.m))
	}
	// 8. The leader lease's jobs (--store postgres).
	if s.cluster != nil {
		s.cluster.lead(s.triggers.m, s.obs.leaderHook, s.topics)
		s.cluster.watch(s.triggers.m, s.topics)
		s.started("leading", func() error { s.cluster.stopLeading(); return nil })
	}
	if s.config != nil {
		ct := configTargets{broker: eng, topics: s.topics, triggers: s.triggers.m, alarms: s.obs.alarms}
		if err := applyConfig(ctx, ct, s.config, log); err != nil {
			return err
		}
	}
	s.mount()
	return nil
}

// mount puts every part's routes behind the front door.
func (s *tidemqServer) mount() {
	o, log, eng := s.o, s.log, s.broker
	protocols := server.ProtocolOptions{Broker: s.obs.metrics.Broker(eng), Topics: s.topics,
		Region: o.region, AccountID: o.accountID, PublicURL: o.publicURL, Auth: s.auth, Authorizer: o.access.authorizer, Logger: log,
		Observe: s.obs.metrics.ObserveRequest, Regions: o.regionFilter()}
	con := newConsole(s.obs.metrics.Broker(eng), s.obs, s.topics, server.ConsoleSQS(protocols), o)
	// First to stop: the console's redrive jobs end while the broker is open.
	s.started("console", con.Close)
	server.Mount(s.door, server.Routes{
		Health:        server.Health(eng, o.auth && !s.open["health"], log),
		Metrics:       s.obs.metrics.Handler(),
		Queues:        s.obs.queuesHandler,
		Alarms:        s.obs.alarmsHandler,
		Trigger:       s.triggers.handler,
		Backup:        o.backupHandler(s.store, log),
		ConsoleAssets: console.Assets(),
		ConsoleAPI:    con.API(),
		Protocols:     server.Protocols(protocols),
	}, s.open)
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
