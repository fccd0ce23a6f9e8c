package trigger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"time"
)

// maxResponse bounds what is read of a function's response (Lambda's
// synchronous payload limit).
const maxResponse = 6 << 20

// outcome is how one invocation ended.
type outcome struct {
	resp     []byte
	err      error // a function error, a timeout or a throttle; nil on success
	timeout  bool
	throttle bool
}

// invoker delivers one event to a target.
type invoker interface {
	invoke(ctx context.Context, event []byte) outcome
}

func newInvoker(t Target, client *http.Client) invoker {
	if t.URL != "" {
		return &httpInvoker{t: t, client: client}
	}
	return &commandInvoker{t: t}
}

type httpInvoker struct {
	t      Target
	client *http.Client
}

func (h *httpInvoker) invoke(ctx context.Context, event []byte) outcome {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.t.URL, bytes.NewReader(event))
	if err != nil {
		return outcome{err: redactURLError(err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "tidemq-trigger")
	for k, v := range h.t.Headers {
		req.Header.Set(k, v)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return timedOut(ctx, redactURLError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return timedOut(ctx, fmt.Errorf("read response: %w", err))
	}
	if len(body) > maxResponse {
		return outcome{err: fmt.Errorf("response is larger than %d bytes", maxResponse)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return outcome{err: fmt.Errorf("HTTP %s: %s", resp.Status, excerpt(body)), throttle: resp.StatusCode == http.StatusTooManyRequests}
	}
	return outcome{resp: body}
}

type commandInvoker struct{ t Target }

func (c *commandInvoker) invoke(ctx context.Context, event []byte) outcome {
	cmd := exec.CommandContext(ctx, c.t.Command[0], c.t.Command[1:]...)
	cmd.Dir = c.t.Dir
	cmd.Stdin = bytes.NewReader(event)
	var stdout, stderr limitedBuffer
	stdout.max, stderr.max = maxResponse+1, 4096
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// A killed command's children may keep the pipes open; stop waiting
	// for them shortly after the kill.
	cmd.WaitDelay = time.Second
	ownGroup(cmd)
	err := cmd.Run()
	killGroup(cmd) // what it left running in its group
	if errors.Is(err, exec.ErrWaitDelay) {
		// The command exited 0 and a child it left kept the pipes open:
		// its answer is in, and the child is killed with the group.
		err = nil
	}
	if ctx.Err() != nil {
		return timedOut(ctx, err)
	}
	if err != nil {
		return outcome{err: fmt.Errorf("%v: %s", err, excerpt(stderr.Bytes()))}
	}
	if stdout.Len() > maxResponse {
		return outcome{err: fmt.Errorf("response is larger than %d bytes", maxResponse)}
	}
	return outcome{resp: stdout.Bytes()}
}

// redactURLError hides the userinfo in the URL a *url.Error quotes: net/http
// hides a password, but not a user, which may be a token
// (https://TOKEN@host/). The error becomes the trigger's LastError and is
// logged.
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = RedactURL(ue.URL)
	}
	return err
}

// timedOut turns an error into a timeout when ctx's deadline passed.
func timedOut(ctx context.Context, err error) outcome {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return outcome{err: errors.New("function timed out"), timeout: true}
	}
	if ctx.Err() != nil {
		return outcome{err: fmt.Errorf("invocation cancelled: %w", ctx.Err())}
	}
	return outcome{err: err}
}

// limitedBuffer keeps the first max bytes written and counts the rest.
type limitedBuffer struct {
	bytes.Buffer
	max int
	n   int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.n += len(p)
	if room := b.max - b.Buffer.Len(); room > 0 {
		if len(p) > room {
			b.Buffer.Write(p[:room])
		} else {
			b.Buffer.Write(p)
		}
	}
	return len(p), nil
}

func (b *limitedBuffer) Len() int { return b.n }

func excerpt(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
