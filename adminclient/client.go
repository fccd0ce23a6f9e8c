// Package adminclient is a typed client of a tidemq server's own HTTP API
// (/health, /tidemq/queues, /tidemq/alarms, /tidemq/triggers,
// /tidemq/backup): one request/decode loop for every command that calls
// it (tidemq trigger, apply, alarms, backup, health, top) and for tests.
// Errors come back as *Error, read from the admin error shape
// {"error", "code"} that api/adminjson writes.
//
// The client does not sign: give it an http.Client whose transport does
// (api/sigv4.Transport) for a server that runs with --auth.
package adminclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/alarms"
	"github.com/tidemq/tidemq/api/adminjson"
	"github.com/tidemq/tidemq/backup"
	"github.com/tidemq/tidemq/trigger"
)

// Client calls one server.
type Client struct {
	// Endpoint is the server's base URL, e.g. http://127.0.0.1:9324.
	Endpoint string
	// HTTP sends the requests; nil: http.DefaultClient.
	HTTP *http.Client
	// Timeout bounds each call that has no deadline of its own (0: none).
	Timeout time.Duration
}

// New returns a client of endpoint sending with hc (nil:
// http.DefaultClient).
func New(endpoint string, hc *http.Client) *Client {
	return &Client{Endpoint: endpoint, HTTP: hc}
}

// Error is an answer outside 2xx.
type Error struct {
	Method, URL string
	Status      int
	// Code and Message are the server's, when it answered the admin error
	// shape; otherwise Message is empty and Body holds what came back.
	Code, Message string
	Body          string
}

// Error is the server's message, its first paragraph (a signature
// mismatch goes on with the canonical request), or the raw answer.
func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("%s %s: %d %s: %s", e.Method, e.URL, e.Status, http.StatusText(e.Status), e.Body)
	}
	msg, _, _ := strings.Cut(e.Message, "\n\n")
	return msg
}

// IsNotFound reports whether err is a 404 that the server answered in the
// admin error shape (a server without the route answers something else).
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound && e.Message != ""
}

// maxAnswer bounds an answer read into memory.
const maxAnswer = 64 << 20

// Do sends one request: in, when not nil, as its JSON body; a 2xx answer
// is decoded into out when out is not nil and there is a body.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	raw, err := c.DoRaw(ctx, method, path, in)
	if err != nil || out == nil || len(bytes.TrimSpace(raw)) == 0 {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s: unexpected answer: %w", method, c.url(path), err)
	}
	return nil
}

// DoRaw is Do without decoding: the answer's body.
func (c *Client) DoRaw(ctx context.Context, method, path string, in any) ([]byte, error) {
	if c.Timeout > 0 {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, c.Timeout)
			defer cancel()
		}
	}
	var body io.Reader
	if in != nil {
		b, ok := in.([]byte)
		if !ok {
			var err error
			if b, err = json.Marshal(in); err != nil {
				return nil, err
			}
		}
		body = bytes.NewReader(b)
	}
	u := c.url(path)
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		e := &Error{Method: method, URL: u, Status: resp.StatusCode, Body: strings.TrimSpace(string(raw))}
		var eb adminjson.ErrorBody
		if json.Unmarshal(raw, &eb) == nil && eb.Error != "" {
			e.Code, e.Message = eb.Code, eb.Error
		}
		return nil, e
	}
	return raw, nil
}

func (c *Client) url(path string) string { return strings.TrimRight(c.Endpoint, "/") + path }

// Health is GET /health: the server's answer when it can serve.
func (c *Client) Health(ctx context.Context) (string, error) {
	raw, err := c.DoRaw(ctx, http.MethodGet, "/health", nil)
	return string(raw), err
}

// Queues reads every page of GET /tidemq/queues (a server from before
// pages answers all in one, without a nextToken).
func (c *Client) Queues(ctx context.Context) ([]tidemq.QueueSnapshot, error) {
	var all []tidemq.QueueSnapshot
	token := ""
	for {
		var q struct {
			Queues    []tidemq.QueueSnapshot `json:"queues"`
			NextToken string                 `json:"nextToken"`
		}
		path := "/tidemq/queues?limit=" + strconv.Itoa(tidemq.MaxSnapshotPageSize)
		if token != "" {
			path += "&nextToken=" + url.QueryEscape(token)
		}
		if err := c.Do(ctx, http.MethodGet, path, nil, &q); err != nil {
			return nil, err
		}
		all = append(all, q.Queues...)
		if q.NextToken == "" || q.NextToken == token {
			return all, nil
		}
		token = q.NextToken
	}
}

// Alarms reads every page of GET /tidemq/alarms: every alarm the server
// evaluates (a server from before pages answers all in one, without a
// nextToken).
func (c *Client) Alarms(ctx context.Context) (*alarms.List, error) {
	return c.alarmPages(ctx, false)
}

// FiringAlarms reads the pages of GET /tidemq/alarms up to the first alarm
// that does not fire (the firing ones come first) and returns the firing
// ones: at 100,000 queues, one page instead of some 40.
func (c *Client) FiringAlarms(ctx context.Context) (*alarms.List, error) {
	return c.alarmPages(ctx, true)
}

func (c *Client) alarmPages(ctx context.Context, firingOnly bool) (*alarms.List, error) {
	all := alarms.List{Alarms: []alarms.Alarm{}}
	token := ""
	for {
		var l alarms.List
		path := "/tidemq/alarms?limit=" + strconv.Itoa(alarms.MaxPageSize)
		if token != "" {
			path += "&nextToken=" + url.QueryEscape(token)
		}
		if err := c.Do(ctx, http.MethodGet, path, nil, &l); err != nil {
			return nil, err
		}
		for _, a := range l.Alarms {
			if firingOnly && a.State != alarms.StateFiring {
				return &all, nil
			}
			all.Alarms = append(all.Alarms, a)
		}
		if l.NextToken == "" || l.NextToken == token {
			return &all, nil
		}
		token = l.NextToken
	}
}

// Backup is POST /tidemq/backup: a checkpoint of the server's store into
// dest, on the server's machine.
func (c *Client) Backup(ctx context.Context, dest string) (*backup.Result, error) {
	var res backup.Result
	if err := c.Do(ctx, http.MethodPost, backup.APIPath, backup.Request{Destination: dest}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Triggers lists the triggers.
func (c *Client) Triggers(ctx context.Context) ([]*trigger.Status, error) {
	var l struct{ Triggers []*trigger.Status }
	if err := c.Do(ctx, http.MethodGet, trigger.APIPath, nil, &l); err != nil {
		return nil, err
	}
	return l.Triggers, nil
}

// Trigger reads one trigger; nil (and no error) when there is none.
func (c *Client) Trigger(ctx context.Context, name string) (*trigger.Status, error) {
	var s trigger.Status
	err := c.Do(ctx, http.MethodGet, triggerPath(name), nil, &s)
	if IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// CreateTrigger creates a trigger from a trigger.Config or its JSON
// fields.
func (c *Client) CreateTrigger(ctx context.Context, config any) (*trigger.Status, error) {
	var s trigger.Status
	if err := c.Do(ctx, http.MethodPost, trigger.APIPath, config, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// UpdateTrigger changes the fields patch gives (a map, a JSON text as
// []byte, or topology.TriggerPatch's answer).
func (c *Client) UpdateTrigger(ctx context.Context, name string, patch any) (*trigger.Status, error) {
	var s trigger.Status
	if err := c.Do(ctx, http.MethodPatch, triggerPath(name), patch, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// SetTriggerEnabled enables or disables a trigger.
func (c *Client) SetTriggerEnabled(ctx context.Context, name string, on bool) (*trigger.Status, error) {
	verb := "/disable"
	if on {
		verb = "/enable"
	}
	var s trigger.Status
	if err := c.Do(ctx, http.MethodPost, triggerPath(name)+verb, nil, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// DeleteTrigger deletes a trigger.
func (c *Client) DeleteTrigger(ctx context.Context, name string) error {
	return c.Do(ctx, http.MethodDelete, triggerPath(name), nil, nil)
}

func triggerPath(name string) string { return trigger.APIPath + "/" + url.PathEscape(name) }
