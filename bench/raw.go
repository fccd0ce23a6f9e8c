package bench

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// RawClient speaks AWS JSON 1.0 to an SQS endpoint with hand-built request
// bodies, over a minimal HTTP/1.1 client for http:// endpoints (see
// connPool) and net/http for https://: it costs the load generator a
// fraction of what the SDK's middleware stack does, so that on a shared
// machine the numbers measure the server. It still checks the MD5 of every
// body it sends and receives.
type RawClient struct {
	// Endpoint is the server's base URL, e.g. http://127.0.0.1:9324.
	Endpoint string
	// HTTP is the client to use (nil: one with keep-alive connections
	// enough for many workers).
	HTTP *http.Client
	// Sign, if set, is called on every request before it is sent, e.g. to
	// add a SigV4 signature; without it requests are unsigned, which
	// tidemq accepts unless it runs with --auth.
	Sign func(ctx context.Context, r *http.Request, body []byte) error
	// SignSNS is Sign for the SNS requests of the SNS scenarios (signed
	// for the service "sns").
	SignSNS func(ctx context.Context, r *http.Request, body []byte) error

	pool *connPool // for http:// endpoints; nil: use HTTP
}

// NewRawClient returns a RawClient for endpoint with a transport that keeps
// up to conns connections open.
func NewRawClient(endpoint string, conns int) *RawClient {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = conns
	t.MaxIdleConnsPerHost = conns
	c := &RawClient{Endpoint: strings.TrimSuffix(endpoint, "/"), HTTP: &http.Client{Transport: t}}
	if u, err := url.Parse(c.Endpoint); err == nil && u.Scheme == "http" && (u.Path == "" || u.Path == "/") {
		addr := u.Host
		if u.Port() == "" {
			addr = net.JoinHostPort(u.Hostname(), "80")
		}
		c.pool = newConnPool(addr, u.Host, conns)
	}
	return c
}

// jsonHeaders are the header lines of an unsigned request, by action.
var jsonHeaders sync.Map

func headersFor(action string) []string {
	if h, ok := jsonHeaders.Load(action); ok {
		return h.([]string)
	}
	h := []string{"Content-Type: application/x-amz-json-1.0", "X-Amz-Target: AmazonSQS." + action}
	jsonHeaders.Store(action, h)
	return h
}

var bufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// APIError is an error answer from the endpoint.
type APIError struct {
	Status  int
	Code    string `json:"__type"`
	Message string `json:"message"`
}

func (e *APIError) Error() string {
	code := e.Code
	if i := strings.LastIndexByte(code, '#'); i >= 0 {
		code = code[i+1:]
	}
	return fmt.Sprintf("%s (HTTP %d): %s", code, e.Status, e.Message)
}

// call posts body as action and decodes the answer into out (if not nil).
func (c *RawClient) call(ctx context.Context, action string, body []byte, out any) error {
	if c.pool == nil {
		return c.callHTTP(ctx, action, body, out)
	}
	headers := headersFor(action)
	if c.Sign != nil {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Endpoint+"/", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header["Content-Type"] = []string{"application/x-amz-json-1.0"}
		req.Header["X-Amz-Target"] = []string{"AmazonSQS." + action}
		if err := c.Sign(ctx, req, body); err != nil {
			return err
		}
		headers = make([]string, 0, len(req.Header))
		for k, vs := range req.Header {
			for _, v := range vs {
				headers = append(headers, k+": "+v)
			}
		}
	}
	buf := bufs.Get().(*bytes.Buffer)
	defer bufs.Put(buf)
	status, err := c.pool.post(ctx, headers, body, buf)
	if err != nil {
		return err
	}
	return decodeAnswer(status, buf.Bytes(), out)
}

// decodeAnswer turns an answer into out, or into an *APIError.
func decodeAnswer(status int, body []byte, out any) error {
	if status != http.StatusOK {
		e := &APIError{Status: status}
		_ = json.Unmarshal(body, e)
		return e
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(body, out)
}

// callHTTP is call over net/http.
func (c *RawClient) callHTTP(ctx context.Context, action string, body []byte, out any) error {
	buf := bufs.Get().(*bytes.Buffer)
	defer bufs.Put(buf)
	buf.Reset()
	status, err := c.postHTTP(ctx, map[string][]string{
		"Content-Type": {"application/x-amz-json-1.0"},
		"X-Amz-Target": {"AmazonSQS." + action},
	}, c.Sign, body, buf)
	if err != nil {
		return err
	}
	return decodeAnswer(status, buf.Bytes(), out)
}

// postHTTP posts body to the endpoint over net/http with header, signed
// by sign when it is not nil, reads the answer into buf and returns its
// status.
func (c *RawClient) postHTTP(ctx context.Context, header http.Header, sign func(context.Context, *http.Request, []byte) error, body []byte, buf *bytes.Buffer) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Endpoint+"/", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if sign != nil {
		if err := sign(ctx, req, body); err != nil {
			return 0, err
		}
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return 0, err
	}
	return resp.StatusCode, nil
}

// request is a JSON object under construction.
type request struct{ b []byte }

func (r *request) str(name, v string) {
	r.sep()
	r.b = appendString(r.b, name)
	r.b = append(r.b, ':')
	r.b = appendString(r.b, v)
}

func (r *request) int(name string, v int) {
	r.sep()
	r.b = appendString(r.b, name)
	r.b = append(r.b, ':')
	r.b = strconv.AppendInt(r.b, int64(v), 10)
}

func (r *request) sep() {
	if n := len(r.b); n > 0 && r.b[n-1] != '{' && r.b[n-1] != '[' {
		r.b = append(r.b, ',')
	}
}

func (r *request) open(name string, c byte) {
	r.sep()
	if name != "" {
		r.b = appendString(r.b, name)
		r.b = append(r.b, ':')
	}
	r.b = append(r.b, c)
}

func (r *request) close(c byte) { r.b = append(r.b, c) }

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			b = append(b, c)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigit(c>>4), hexDigit(c&0xF))
			}
			i++
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		b = append(b, s[i:i+size]...)
		i += size
	}
	return append(b, '"')
}

func hexDigit(c byte) byte { return "0123456789abcdef"[c] }

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

func (c *RawClient) CreateQueue(ctx context.Context, name string, attrs map[string]string) (string, error) {
	r := request{b: []byte{'{'}}
	r.str("QueueName", name)
	r.open("Attributes", '{')
	for k, v := range attrs {
		r.str(k, v)
	}
	r.close('}')
	r.close('}')
	var out struct{ QueueUrl string }
	if err := c.call(ctx, "CreateQueue", r.b, &out); err != nil {
		return "", err
	}
	return out.QueueUrl, nil
}

func (c *RawClient) DeleteQueue(ctx context.Context, url string) error {
	r := request{b: []byte{'{'}}
	r.str("QueueUrl", url)
	r.close('}')
	return c.call(ctx, "DeleteQueue", r.b, nil)
}

func (c *RawClient) Send(ctx context.Context, url string, msgs []Outgoing, batch bool) error {
	r := request{b: make([]byte, 0, 64+len(url)+len(msgs)*(len(msgs[0].Body)+64))}
	r.b = append(r.b, '{')
	r.str("QueueUrl", url)
	entry := func(i int, m Outgoing) {
		if batch {
			r.str("Id", strconv.Itoa(i))
		}
		r.str("MessageBody", m.Body)
		if m.Group != "" {
			r.str("MessageGroupId", m.Group)
			r.str("MessageDeduplicationId", m.Dedup)
		}
	}
	if !batch {
		entry(0, msgs[0])
		r.close('}')
		var out struct{ MD5OfMessageBody string }
		if err := c.call(ctx, "SendMessage", r.b, &out); err != nil {
			return err
		}
		if want := md5Hex(msgs[0].Body); out.MD5OfMessageBody != want {
			return fmt.Errorf("SendMessage: MD5OfMessageBody %q, want %q", out.MD5OfMessageBody, want)
		}
		return nil
	}
	r.open("Entries", '[')
	for i, m := range msgs {
		r.open("", '{')
		entry(i, m)
		r.close('}')
	}
	r.close(']')
	r.close('}')
	var out struct {
		Successful []struct{ Id, MD5OfMessageBody string }
		Failed     []struct{ Id, Code, Message string }
	}
	if err := c.call(ctx, "SendMessageBatch", r.b, &out); err != nil {
		return err
	}
	if len(out.Failed) > 0 {
		return fmt.Errorf("%d batch entries failed: %s: %s", len(out.Failed), out.Failed[0].Code, out.Failed[0].Message)
	}
	if len(out.Successful) != len(msgs) {
		return fmt.Errorf("SendMessageBatch: %d of %d entries answered", len(out.Successful), len(msgs))
	}
	for _, s := range out.Successful {
		i, err := strconv.Atoi(s.Id)
		if err != nil || i < 0 || i >= len(msgs) {
			return fmt.Errorf("SendMessageBatch: unknown entry id %q", s.Id)
		}
		if want := md5Hex(msgs[i].Body); s.MD5OfMessageBody != want {
			return fmt.Errorf("SendMessageBatch: MD5OfMessageBody %q, want %q", s.MD5OfMessageBody, want)
		}
	}
	return nil
}

func (c *RawClient) Receive(ctx context.Context, url string, max, wait int) ([]Received, error) {
	r := request{b: make([]byte, 0, 96+len(url))}
	r.b = append(r.b, '{')
	r.str("QueueUrl", url)
	r.int("MaxNumberOfMessages", max)
	r.int("WaitTimeSeconds", wait)
	r.close('}')
	var out struct {
		Messages []struct{ Body, ReceiptHandle, MD5OfBody string }
	}
	if err := c.call(ctx, "ReceiveMessage", r.b, &out); err != nil {
		return nil, err
	}
	msgs := make([]Received, len(out.Messages))
	for i, m := range out.Messages {
		if want := md5Hex(m.Body); m.MD5OfBody != want {
			return nil, fmt.Errorf("ReceiveMessage: MD5OfBody %q, want %q", m.MD5OfBody, want)
		}
		msgs[i] = Received{Body: m.Body, Handle: m.ReceiptHandle}
	}
	return msgs, nil
}

func (c *RawClient) Delete(ctx context.Context, url string, handles []string, batch bool) error {
	if !batch {
		for _, h := range handles {
			r := request{b: make([]byte, 0, 64+len(url)+len(h))}
			r.b = append(r.b, '{')
			r.str("QueueUrl", url)
			r.str("ReceiptHandle", h)
			r.close('}')
			if err := c.call(ctx, "DeleteMessage", r.b, nil); err != nil {
				return err
			}
		}
		return nil
	}
	r := request{b: make([]byte, 0, 64+len(url)+len(handles)*(len(handles[0])+32))}
	r.b = append(r.b, '{')
	r.str("QueueUrl", url)
	r.open("Entries", '[')
	for i, h := range handles {
		r.open("", '{')
		r.str("Id", strconv.Itoa(i))
		r.str("ReceiptHandle", h)
		r.close('}')
	}
	r.close(']')
	r.close('}')
	var out struct {
		Successful []struct{ Id string }
		Failed     []struct{ Id, Code, Message string }
	}
	if err := c.call(ctx, "DeleteMessageBatch", r.b, &out); err != nil {
		return err
	}
	if len(out.Failed) > 0 {
		return fmt.Errorf("%d deletes failed: %s: %s", len(out.Failed), out.Failed[0].Code, out.Failed[0].Message)
	}
	if len(out.Successful) != len(handles) {
		return fmt.Errorf("DeleteMessageBatch: %d of %d entries answered", len(out.Successful), len(handles))
	}
	return nil
}

func (c *RawClient) Counts(ctx context.Context, url string) (int64, int64, error) {
	r := request{b: []byte{'{'}}
	r.str("QueueUrl", url)
	r.b = append(r.b, `,"AttributeNames":["ApproximateNumberOfMessages","ApproximateNumberOfMessagesNotVisible"]}`...)
	var out struct{ Attributes map[string]string }
	if err := c.call(ctx, "GetQueueAttributes", r.b, &out); err != nil {
		return 0, 0, err
	}
	v, err1 := strconv.ParseInt(out.Attributes["ApproximateNumberOfMessages"], 10, 64)
	n, err2 := strconv.ParseInt(out.Attributes["ApproximateNumberOfMessagesNotVisible"], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("GetQueueAttributes: unexpected answer %v", out.Attributes)
	}
	return v, n, nil
}
