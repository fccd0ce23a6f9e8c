package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tidemq/tidemq/topology"
	"github.com/tidemq/tidemq/trigger"
)

// triggerAPITarget applies triggers through a tidemq server's admin API
// (/tidemq/triggers).
type triggerAPITarget struct {
	base   string // the server's base URL
	client *http.Client
}

// errNoTrigger is a 404 of the admin API.
var errNoTrigger = errors.New("no such trigger")

func (t *triggerAPITarget) do(ctx context.Context, method, path string, body []byte) (*trigger.Status, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	u := strings.TrimRight(t.base, "/") + trigger.APIPath + path
	req, err := http.NewRequestWithContext(ctx, method, u, r)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	cl := t.client
	if cl == nil {
		cl = http.DefaultClient
	}
	resp, err := cl.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusNotFound && method == http.MethodGet {
		var e struct{ Error string }
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			return nil, errNoTrigger
		}
		return nil, fmt.Errorf("GET %s: 404: is this a tidemq server? (%s)", u, strings.TrimSpace(string(b)))
	}
	if err := adminError(method, u, resp.StatusCode, b); err != nil {
		return nil, err
	}
	var s trigger.Status
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, u, err)
	}
	return &s, nil
}

func (t *triggerAPITarget) Trigger(ctx context.Context, name string) (*trigger.Status, error) {
	s, err := t.do(ctx, http.MethodGet, "/"+url.PathEscape(name), nil)
	if errors.Is(err, errNoTrigger) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (t *triggerAPITarget) CreateTrigger(ctx context.Context, c trigger.Config) ([]string, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	s, err := t.do(ctx, http.MethodPost, "", b)
	if err != nil {
		return nil, err
	}
	return s.Warnings, nil
}

func (t *triggerAPITarget) UpdateTrigger(ctx context.Context, c trigger.Config) ([]string, error) {
	s, err := t.do(ctx, http.MethodPut, "/"+url.PathEscape(c.Name), topology.TriggerPatch(c))
	if err != nil {
		return nil, err
	}
	return s.Warnings, nil
}
