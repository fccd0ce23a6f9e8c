package server

import (
	"net/http"

	"github.com/tidemq/tidemq/api/frontdoor"
	"github.com/tidemq/tidemq/backup"
	"github.com/tidemq/tidemq/console"
	"github.com/tidemq/tidemq/trigger"
)

// Routes are everything the server answers, by route.
type Routes struct {
	Health, Metrics         http.Handler
	Queues, Alarms, Trigger http.Handler
	Backup                  http.Handler // POST /tidemq/backup
	Protocols               http.Handler // SQS and SNS (see Protocols)
	// ConsoleAssets are the web console's files, ConsoleAPI its data.
	ConsoleAssets, ConsoleAPI http.Handler
}

// Mount is the one place where the server's routes are registered, each
// with its access rule (frontdoor's package comment); open names the
// probes ("health", "metrics") answered without a signature. A route
// added anywhere else does not exist.
func Mount(d *frontdoor.Door, h Routes, open map[string]bool) {
	d.Probe("GET /health", h.Health, open["health"])
	d.Probe("GET /metrics", h.Metrics, open["metrics"])
	d.Admin("GET /tidemq/queues", h.Queues)
	d.Admin("GET /tidemq/alarms", h.Alarms)
	d.Admin(trigger.APIPath, h.Trigger)
	d.Admin(trigger.APIPath+"/", h.Trigger)
	d.Admin("POST "+backup.APIPath, h.Backup)
	// The console's page and scripts hold no data: public, so that a
	// browser can load them and then sign its data requests (Admin).
	d.Asset("GET "+console.Path+"/", h.ConsoleAssets)
	d.Admin("GET "+console.APIPath+"/", h.ConsoleAPI)
	d.Admin("POST "+console.APIPath+"/", h.ConsoleAPI)
	d.Protocol("/", h.Protocols)
}
