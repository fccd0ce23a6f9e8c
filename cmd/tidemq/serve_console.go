package main

import (
	"net/http"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/console"
	topicstore "github.com/tidemq/tidemq/sns"
)

// newConsole builds the web console of `tidemq serve` on the broker the
// SQS API uses, the alarms (unless --no-alarms) and the topic service;
// sqs is the unauthenticated SQS handler its message-by-message redrives
// go through (server.ConsoleSQS). The overview visits the queues through
// the engine's Visit (obs.visit), which broker's wrappers hide.
func newConsole(broker tidemq.Broker, obs *observability, topics *topicstore.Service, sqs http.Handler, o *serveOptions) *console.Console {
	co := console.Options{Broker: broker, Topics: topics, Region: o.region, AccountID: o.accountID, SQS: sqs, Visit: obs.visit}
	if obs.alarms != nil {
		co.Alarms, co.AlarmsFor = obs.alarms.Alarms, obs.alarms.Shown
	}
	co.Visible, co.VisibleTopic = o.access.visible(), o.access.visibleTopic()
	return console.New(co)
}
