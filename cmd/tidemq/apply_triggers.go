package main

import (
	"context"

	"github.com/tidemq/tidemq/adminclient"
	"github.com/tidemq/tidemq/topology"
	"github.com/tidemq/tidemq/trigger"
)

// triggerAPITarget applies triggers through a tidemq server's admin API
// (/tidemq/triggers).
type triggerAPITarget struct {
	client *adminclient.Client
}

func (t *triggerAPITarget) Trigger(ctx context.Context, name string) (*trigger.Status, error) {
	s, err := t.client.Trigger(ctx, name)
	return s, adminError(err)
}

func (t *triggerAPITarget) CreateTrigger(ctx context.Context, c trigger.Config) ([]string, error) {
	s, err := t.client.CreateTrigger(ctx, c)
	if err != nil {
		return nil, adminError(err)
	}
	return s.Warnings, nil
}

func (t *triggerAPITarget) UpdateTrigger(ctx context.Context, c trigger.Config) ([]string, error) {
	s, err := t.client.UpdateTrigger(ctx, c.Name, topology.TriggerPatch(c))
	if err != nil {
		return nil, adminError(err)
	}
	return s.Warnings, nil
}
