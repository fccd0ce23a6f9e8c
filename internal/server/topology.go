package server

import (
	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/alarms"
	topicstore "github.com/tidemq/tidemq/sns"
	"github.com/tidemq/tidemq/topology"
	"github.com/tidemq/tidemq/trigger"
)

// TopologyTargets are the parts of a running server that a topology (a
// tidemq.yaml or a SAM template) is applied to in process, for
// topology.ApplyAll: the queues, and those of topics, triggers and alarm
// overrides whose part is given. Without alarms (nil: the built-in alarms
// are off) the alarm overrides are reported as not applied.
func TopologyTargets(broker tidemq.Broker, topics *topicstore.Service, triggers *trigger.Manager, ev *alarms.Evaluator) topology.Targets {
	t := topology.Targets{Queues: topology.BrokerTarget{Broker: broker}, NotApplied: map[string]string{}}
	if topics != nil {
		t.Topics = topology.SNSTarget{Service: topics}
	}
	if triggers != nil {
		t.Triggers = topology.ManagerTarget{Manager: triggers}
	}
	if ev != nil {
		t.Alarms = ev
	} else {
		t.NotApplied[topology.KindAlarm] = "the built-in alarms are off (--no-alarms)"
	}
	return t
}
