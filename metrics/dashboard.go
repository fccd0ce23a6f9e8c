package metrics

import (
	"bytes"
	"encoding/json"
)

// panel is one time-series panel of the dashboard.
type panel struct {
	title, unit string
	targets     [][2]string // expr, legend
}

// dashboardRows are the dashboard's panels, two per row.
var dashboardRows = []panel{
	{"Depth (visible + in flight + delayed)", "short", [][2]string{
		{`sum by (queue) (tidemq_messages_visible{queue=~"$queue"} + tidemq_messages_not_visible{queue=~"$queue"} + tidemq_messages_delayed{queue=~"$queue"})`, "{{queue}}"}}},
	{"Oldest message age", "s", [][2]string{
		{`max by (queue) (tidemq_oldest_message_age_seconds{queue=~"$queue"})`, "{{queue}}"},
		{`max by (queue) (0.5 * tidemq_queue_retention_seconds{queue=~"$queue"})`, "{{queue}} 50% retention"}}},
	{"Visible / in flight / delayed", "short", [][2]string{
		{`sum by (queue) (tidemq_messages_visible{queue=~"$queue"})`, "{{queue}} visible"},
		{`sum by (queue) (tidemq_messages_not_visible{queue=~"$queue"})`, "{{queue}} in flight"},
		{`sum by (queue) (tidemq_messages_delayed{queue=~"$queue"})`, "{{queue}} delayed"}}},
	{"Dead-letter queues (visible)", "short", [][2]string{
		{`sum by (queue) (tidemq_messages_visible{queue=~"$queue"} and on(queue, instance, job) tidemq_queue_is_dead_letter_queue == 1)`, "{{queue}}"}}},
	{"Sent / received / deleted per second", "ops", [][2]string{
		{`sum by (queue) (rate(tidemq_messages_sent_total{queue=~"$queue"}[$__rate_interval]))`, "{{queue}} sent"},
		{`sum by (queue) (rate(tidemq_messages_received_total{queue=~"$queue"}[$__rate_interval]))`, "{{queue}} received"},
		{`sum by (queue) (rate(tidemq_messages_deleted_total{queue=~"$queue"}[$__rate_interval]))`, "{{queue}} deleted"}}},
	{"Dead-lettered / expired / purged per second", "ops", [][2]string{
		{`sum by (queue, dead_letter_queue) (rate(tidemq_messages_dead_lettered_total{queue=~"$queue"}[$__rate_interval]))`, "{{queue}} → {{dead_letter_queue}}"},
		{`sum by (queue) (rate(tidemq_messages_expired_total{queue=~"$queue"}[$__rate_interval]))`, "{{queue}} expired"},
		{`sum by (queue) (rate(tidemq_messages_purged_total{queue=~"$queue"}[$__rate_interval]))`, "{{queue}} purged"}}},
	{"Empty receives per second", "ops", [][2]string{
		{`sum by (queue) (rate(tidemq_empty_receives_total{queue=~"$queue"}[$__rate_interval]))`, "{{queue}}"}}},
	{"Message size (p50, p99)", "bytes", [][2]string{
		{`histogram_quantile(0.5, sum by (queue, le) (rate(tidemq_message_size_bytes_bucket{queue=~"$queue"}[$__rate_interval])))`, "{{queue}} p50"},
		{`histogram_quantile(0.99, sum by (queue, le) (rate(tidemq_message_size_bytes_bucket{queue=~"$queue"}[$__rate_interval])))`, "{{queue}} p99"}}},
	{"Alarms firing", "short", [][2]string{
		{`sum by (alarm, queue) (tidemq_alarm_firing{queue=~"$queue"}) > 0`, "{{alarm}} {{queue}}"},
		{`sum by (alarm, trigger) (tidemq_trigger_alarm_firing{queue=~"$queue"}) > 0`, "{{alarm}} {{trigger}}"}}},
	{"Trigger invocation duration p99 by outcome", "s", [][2]string{
		{`histogram_quantile(0.99, sum by (trigger, outcome, le) (rate(tidemq_trigger_invocation_duration_seconds_bucket{queue=~"$queue"}[$__rate_interval])))`, "{{trigger}} {{outcome}}"}}},
	{"Triggers not Enabled", "short", [][2]string{
		{`sum by (trigger, state) (tidemq_trigger_state{queue=~"$queue",state!="Enabled"}) > 0`, "{{trigger}} {{state}}"}}},
	{"Requests per second by action", "reqps", [][2]string{
		{`sum by (action) (rate(tidemq_requests_total[$__rate_interval]))`, "{{action}}"}}},
	{"Request latency p99 by action (long polls included)", "s", [][2]string{
		{`histogram_quantile(0.99, sum by (action, le) (rate(tidemq_request_duration_seconds_bucket[$__rate_interval])))`, "{{action}}"}}},
	{"Errors per second by code", "reqps", [][2]string{
		{`sum by (action, code) (rate(tidemq_request_errors_total[$__rate_interval]))`, "{{action}} {{code}}"}}},
	{"WAL fsync latency (p50, p99)", "s", [][2]string{
		{`histogram_quantile(0.5, sum by (le, instance) (rate(tidemq_storage_fsync_duration_seconds_bucket[$__rate_interval])))`, "{{instance}} p50"},
		{`histogram_quantile(0.99, sum by (le, instance) (rate(tidemq_storage_fsync_duration_seconds_bucket[$__rate_interval])))`, "{{instance}} p99"}}},
	{"Group-commit size (durable writes per fsync)", "short", [][2]string{
		{`sum by (instance) (rate(tidemq_storage_synced_commits_total[$__rate_interval])) / sum by (instance) (rate(tidemq_storage_fsyncs_total[$__rate_interval]))`, "{{instance}}"}}},
}

// GrafanaDashboard returns the Grafana dashboard (JSON model) shipped as
// deploy/grafana-dashboard.json: every tidemq metric, per queue, with a
// queue filter and a Prometheus data source chooser.
func GrafanaDashboard() []byte {
	ds := map[string]any{"type": "prometheus", "uid": "${datasource}"}
	panels := make([]any, 0, len(dashboardRows))
	for i, p := range dashboardRows {
		targets := make([]any, 0, len(p.targets))
		for j, t := range p.targets {
			targets = append(targets, map[string]any{
				"datasource": ds, "expr": t[0], "legendFormat": t[1], "refId": string(rune('A' + j)),
			})
		}
		panels = append(panels, map[string]any{
			"id": i + 1, "type": "timeseries", "title": p.title, "datasource": ds,
			"gridPos":     map[string]int{"h": 8, "w": 12, "x": (i % 2) * 12, "y": (i / 2) * 8},
			"fieldConfig": map[string]any{"defaults": map[string]any{"unit": p.unit}, "overrides": []any{}},
			"options": map[string]any{
				"legend":  map[string]any{"displayMode": "list", "placement": "bottom", "showLegend": true},
				"tooltip": map[string]any{"mode": "multi", "sort": "desc"},
			},
			"targets": targets,
		})
	}
	d := map[string]any{
		"title": "tidemq", "uid": "tidemq-overview", "tags": []string{"tidemq", "sqs"},
		"description":   "Queues, dead-letter queues, alarms, API and storage of tidemq (generated by tidemq alarms dashboard).",
		"editable":      true,
		"schemaVersion": 39,
		"time":          map[string]string{"from": "now-6h", "to": "now"},
		"refresh":       "30s",
		"panels":        panels,
		"templating": map[string]any{"list": []any{
			map[string]any{"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus"},
			map[string]any{
				"name": "queue", "label": "Queue", "type": "query", "datasource": ds,
				"query": "label_values(tidemq_messages_visible, queue)", "refresh": 2,
				"includeAll": true, "multi": true, "allValue": ".*",
				"current": map[string]any{"text": "All", "value": "$__all"},
			},
		}},
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(d)
	return b.Bytes()
}
