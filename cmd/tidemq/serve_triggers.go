package main

import (
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/api/sigv4"
	"github.com/tidemq/tidemq/metrics"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/trigger"
)

// triggerOptions are the serve flags of the triggers.
type triggerOptions struct {
	allowCommands bool
}

func (t *triggerOptions) addFlags(f *pflag.FlagSet) {
	f.BoolVar(&t.allowCommands, "allow-trigger-commands", false, "let triggers run commands and Lambda functions (--runtime, a template's CodeUri/Handler/Runtime) on this machine (anyone who reaches the admin API could run any program)")
}

// triggers is the server's trigger manager, running.
type triggers struct {
	m       *trigger.Manager
	handler http.Handler // the admin API under trigger.APIPath
}

// startTriggers starts the trigger manager on store, its share of the one
// store of the server (in memory with --in-memory): the triggers, their
// targets' secrets included, are kept there under trg/. The manager
// closes store. At the first start on the data directory of a release
// that kept them in DATA_DIR/triggers.json, that file is imported first
// and renamed triggers.json.imported (see trigger.ImportFile).
//
// node ("" for none) names this node when the store is shared with other
// nodes (--store postgres): the triggers run only while this node leads
// (cluster.lead), are reloaded every --cluster-reload and when another
// node changed them (cluster.watch), and their counters are shared.
func startTriggers(b tidemq.Broker, store storage.Store, reg prometheus.Registerer, o *serveOptions, node string, log *slog.Logger) (*triggers, error) {
	shared := node != ""
	if !o.inMemory && !shared {
		if err := trigger.ImportFile(store, legacyTriggersFile(o), log); err != nil {
			store.Close()
			return nil, err
		}
	}
	to := trigger.Options{Broker: b, Store: store, AllowCommands: o.triggers.allowCommands, Logger: log,
		HomeRegion: o.region, RequestRegion: sigv4.ScopeRegion}
	if shared {
		to.Follow, to.Reload, to.NodeID = true, o.cluster.reload, node
	}
	m, err := trigger.NewManager(to)
	if err != nil {
		return nil, err
	}
	if reg != nil {
		if err := reg.Register(metrics.NewTriggerCollector(m.Stats)); err != nil {
			m.Close(context.Background())
			return nil, err
		}
	}
	m.Start()
	return &triggers{m: m, handler: m.Handler()}, nil
}

// legacyTriggersFile is where releases before the one store kept the
// triggers: triggers.json in the data directory.
func legacyTriggersFile(o *serveOptions) string { return filepath.Join(o.dataDir, trigger.LegacyFile) }

// stop ends the polls and waits up to d for invocations in flight, and
// closes the manager's share of the store. A second stop does nothing.
func (t *triggers) stop(d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_ = t.m.Close(ctx)
}
