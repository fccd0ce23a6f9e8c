package alarms

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"time"
)

// Webhook receives alarm transitions.
type Webhook interface {
	// Send queues a transition for delivery. It must not block.
	Send(t Transition)
}

// Payload is Alertmanager's webhook payload (version 4), so that anything
// that takes Alertmanager's webhooks takes tidemq's.
type Payload struct {
	Version           string            `json:"version"`
	GroupKey          string            `json:"groupKey"`
	TruncatedAlerts   int               `json:"truncatedAlerts"`
	Status            string            `json:"status"` // firing or resolved
	Receiver          string            `json:"receiver"`
	GroupLabels       map[string]string `json:"groupLabels"`
	CommonLabels      map[string]string `json:"commonLabels"`
	CommonAnnotations map[string]string `json:"commonAnnotations"`
	ExternalURL       string            `json:"externalURL"`
	Alerts            []PayloadAlert    `json:"alerts"`
}

// PayloadAlert is one alert of a Payload.
type PayloadAlert struct {
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Fingerprint  string            `json:"fingerprint"`
}

// NewPayload builds the webhook payload of one transition. externalURL is
// the server's base URL ("" if unknown): the alert links to its
// /tidemq/alarms there.
func NewPayload(t Transition, externalURL string) Payload {
	status := "firing"
	if t.State == StateOK {
		status = "resolved"
	}
	labels := map[string]string{
		"alertname": AlertName(t.Alarm.Alarm),
		"alarm":     t.Alarm.Alarm,
		"queue":     t.Queue,
		"severity":  severities[t.Alarm.Alarm],
		"source":    "tidemq",
	}
	annotations := map[string]string{
		"summary":   t.Summary,
		"value":     trimFloat(t.Value),
		"threshold": trimFloat(t.Threshold),
	}
	gen := ""
	if externalURL != "" {
		gen = strings.TrimRight(externalURL, "/") + "/tidemq/alarms"
	}
	group := map[string]string{"alertname": labels["alertname"], "queue": t.Queue}
	groupKey := fmt.Sprintf("{}:{alertname=%q, queue=%q}", labels["alertname"], t.Queue)
	if t.Trigger != "" {
		labels["trigger"], group["trigger"] = t.Trigger, t.Trigger
		groupKey = fmt.Sprintf("{}:{alertname=%q, queue=%q, trigger=%q}", labels["alertname"], t.Queue, t.Trigger)
	}
	return Payload{
		Version:           "4",
		GroupKey:          groupKey,
		Status:            status,
		Receiver:          "tidemq",
		GroupLabels:       group,
		CommonLabels:      labels,
		CommonAnnotations: annotations,
		ExternalURL:       externalURL,
		Alerts: []PayloadAlert{{
			Status: status, Labels: labels, Annotations: annotations,
			StartsAt: t.StartsAt.UTC(), EndsAt: t.EndsAt.UTC(), GeneratorURL: gen,
			Fingerprint: fingerprint(labels),
		}},
	}
}

func trimFloat(f float64) string { return fmt.Sprintf("%g", f) }

// fingerprint is a stable id of a label set (FNV-1a of the sorted pairs, in
// hex, as Alertmanager's fingerprints look).
func fingerprint(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var h uint64 = 14695981039346656037
	for _, k := range keys {
		for _, b := range []byte(k + "\xff" + labels[k] + "\xff") {
			h ^= uint64(b)
			h *= 1099511628211
		}
	}
	return fmt.Sprintf("%016x", h)
}

// HTTPWebhook posts each transition as JSON to a URL, in order, from one
// goroutine, retrying failures with a doubling backoff.
type HTTPWebhook struct {
	URL         string
	ExternalURL string
	Client      *http.Client
	// Attempts per transition (default 4) and the first retry's wait
	// (default 1 s, doubled each retry).
	Attempts int
	Backoff  time.Duration
	Logger   *slog.Logger

	queue chan Transition
	done  chan struct{}
}

// StartWebhook starts delivering to w.URL until ctx ends. Transitions that
// do not fit in the queue (256) are dropped with a log line.
func StartWebhook(ctx context.Context, w *HTTPWebhook) *HTTPWebhook {
	if w.Client == nil {
		w.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if w.Attempts <= 0 {
		w.Attempts = 4
	}
	if w.Backoff <= 0 {
		w.Backoff = time.Second
	}
	if w.Logger == nil {
		w.Logger = slog.Default()
	}
	w.queue = make(chan Transition, 256)
	w.done = make(chan struct{})
	go w.loop(ctx)
	return w
}

// Send queues a transition.
func (w *HTTPWebhook) Send(t Transition) {
	select {
	case w.queue <- t:
	default:
		w.Logger.Error("alarm webhook queue full: transition dropped", "alarm", t.Alarm.Alarm, "queue", t.Queue, "state", t.State)
	}
}

// Done is closed when the delivery goroutine has stopped.
func (w *HTTPWebhook) Done() <-chan struct{} { return w.done }

func (w *HTTPWebhook) loop(ctx context.Context) {
	defer close(w.done)
	for {
		select {
		case <-ctx.Done():
			return
		case t := <-w.queue:
			w.deliver(ctx, t)
		}
	}
}

func (w *HTTPWebhook) deliver(ctx context.Context, t Transition) {
	body, err := json.Marshal(NewPayload(t, w.ExternalURL))
	if err != nil {
		w.Logger.Error("alarm webhook: encode", "err", err)
		return
	}
	wait := w.Backoff
	for attempt := 1; ; attempt++ {
		err = w.post(ctx, body)
		if err == nil {
			return
		}
		if attempt >= w.Attempts || ctx.Err() != nil {
			w.Logger.Error("alarm webhook: giving up", "url", w.URL, "alarm", t.Alarm.Alarm, "queue", t.Queue,
				"state", t.State, "attempts", attempt, "err", err)
			return
		}
		w.Logger.Warn("alarm webhook: retrying", "url", w.URL, "attempt", attempt, "err", err, "wait", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait *= 2
	}
}

func (w *HTTPWebhook) post(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "tidemq-alarms")
	resp, err := w.Client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("status %s", resp.Status)
	}
	return nil
}
