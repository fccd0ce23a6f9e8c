package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/alarms"
	"github.com/tidemq/tidemq/internal/server"
	topicstore "github.com/tidemq/tidemq/sns"
	"github.com/tidemq/tidemq/topology"
	"github.com/tidemq/tidemq/trigger"
)

// configTargets are the parts of the server that 'tidemq serve --config'
// applies a topology to, in process.
type configTargets struct {
	broker   tidemq.Broker
	topics   *topicstore.Service
	triggers *trigger.Manager
	alarms   *alarms.Evaluator // nil with --no-alarms
}

// targets adapts the server's parts for topology.ApplyAll.
func (ct configTargets) targets() topology.Targets {
	return server.TopologyTargets(ct.broker, ct.topics, ct.triggers, ct.alarms)
}

// loadConfigFile reads the tidemq.yaml or template of 'tidemq serve
// --config' and, with lint, lints it, logging its errors and warnings;
// an error finding fails it. params are a template's parameters as
// NAME=VALUE (--config-param). The server calls it before it opens the
// data directory, so that a topology that does not lint leaves nothing
// behind.
func loadConfigFile(path, region, accountID string, params []string, lint bool, log *slog.Logger) (*topology.Config, error) {
	ps, err := parseParams("--config-param", params)
	if err != nil {
		return nil, err
	}
	c, rep, err := topology.Load(path, topology.ImportOptions{Region: region, AccountID: accountID, Parameters: ps, ParamFlag: "--config-param"})
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	if rep != nil {
		for _, u := range rep.Unsupported {
			log.Info("config: resource not modelled, skipped", "resource", u.LogicalID, "type", u.Type, "line", u.Line)
		}
	} else if len(ps) > 0 {
		log.Warn("config: --config-param ignored: the file is a tidemq.yaml, not a template", "file", path)
	}
	if lint {
		if _, _, err := lintBeforeApply(c, logFindings(log)); err != nil {
			return nil, fmt.Errorf("--config %w; the server did not start", err)
		}
	}
	return c, nil
}

// applyConfig applies a topology loadConfigFile read to the server of
// 'tidemq serve --config': queues, topics and subscriptions, triggers and
// alarm overrides. It logs what it changed and what it did not apply.
func applyConfig(ctx context.Context, ct configTargets, c *topology.Config, log *slog.Logger) error {
	plan, err := topology.ApplyAll(ctx, ct.targets(), c, false)
	if plan != nil {
		logPlan(log, plan)
	}
	if err != nil {
		return fmt.Errorf("--config %s: %w", c.File, err)
	}
	return nil
}

// logPlan logs each change that did something, or was not applied.
func logPlan(log *slog.Logger, plan *topology.Plan) {
	for _, ch := range plan.Changes {
		switch ch.Action {
		case topology.ActionUnchanged:
			continue
		case topology.ActionSkip:
			log.Info("config: "+ch.Kind+" not applied", ch.Kind, ch.Name, "reason", ch.Reason)
		default:
			log.Info("config: "+ch.Kind+" "+ch.Action+"d", ch.Kind, ch.Name, "attributes", len(ch.Attributes))
		}
		for _, n := range ch.Notes {
			log.Info("config: note", ch.Kind, ch.Name, "note", n)
		}
	}
}
