package lambdart

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// apiProcess is a process without a program: the test plays the runtime.
func apiProcess(t *testing.T) (*process, string) {
	p := &process{f: &Function{ARN: "arn:aws:lambda:us-east-1:000000000000:function:f"}, offer: make(chan *invocation),
		stopping: make(chan struct{}), exited: make(chan struct{}), initFailed: make(chan struct{})}
	srv := httptest.NewServer(p.routes())
	t.Cleanup(srv.Close)
	return p, srv.URL + apiPrefix
}

func offer(p *process, id string) *invocation {
	inv := &invocation{id: id, payload: []byte(`{"Records":[]}`), deadline: time.UnixMilli(1700000000123), traceID: "Root=1-5759e988-bd862e3fe1be46a994272793", done: make(chan answer, 1)}
	go func() { p.offer <- inv }()
	return inv
}

func call(t *testing.T, method, url string, body []byte, hdr map[string]string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func TestRuntimeAPI(t *testing.T) {
	p, api := apiProcess(t)
	inv := offer(p, "req-1")
	code, body, h := call(t, "GET", api+"/invocation/next", nil, nil)
	if code != 200 || body != `{"Records":[]}` {
		t.Fatalf("next: %d %s", code, body)
	}
	for k, v := range map[string]string{headerRequestID: "req-1", headerDeadline: "1700000000123",
		headerFunctionARN: p.f.ARN, headerTraceID: inv.traceID, "Content-Type": "application/json"} {
		if h.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, h.Get(k), v)
		}
	}
	// Another id is refused; the invocation still waits.
	code, body, _ = call(t, "POST", api+"/invocation/req-0/response", []byte(`{}`), nil)
	if code != 400 || !strings.Contains(body, `"errorType":"InvalidRequestID"`) {
		t.Fatalf("wrong id: %d %s", code, body)
	}
	code, body, _ = call(t, "POST", api+"/invocation/req-1/response", []byte(`{"ok":true}`), nil)
	if code != 202 || body != `{"status":"OK"}` {
		t.Fatalf("response: %d %s", code, body)
	}
	if a := <-inv.done; string(a.payload) != `{"ok":true}` || a.err != nil {
		t.Fatalf("answer = %s %v", a.payload, a.err)
	}
	// Answered once only.
	if code, _, _ = call(t, "POST", api+"/invocation/req-1/response", []byte(`{}`), nil); code != 400 {
		t.Fatalf("second response: %d", code)
	}

	// An error that is not Lambda's JSON: its text, with the header's type.
	inv = offer(p, "req-2")
	call(t, "GET", api+"/invocation/next", nil, nil)
	code, _, _ = call(t, "POST", api+"/invocation/req-2/error", []byte("boom"), map[string]string{headerErrorType: "Custom.Boom"})
	if a := <-inv.done; code != 202 || a.err == nil || a.err.Type != "Custom.Boom" || a.err.Message != "boom" {
		t.Fatalf("error: %d %+v", code, a.err)
	}

	// A response over 6 MB: 413 to the runtime, an error for the invocation.
	inv = offer(p, "req-3")
	call(t, "GET", api+"/invocation/next", nil, nil)
	code, body, _ = call(t, "POST", api+"/invocation/req-3/response", bytes.Repeat([]byte("x"), MaxResponse+1), nil)
	if a := <-inv.done; code != 413 || a.err == nil || a.err.Type != "Function.ResponseSizeTooLarge" {
		t.Fatalf("large response: %d %s %+v", code, body, a.err)
	}

	// An error in the trailers of a streamed response (aws-lambda-go).
	inv = offer(p, "req-4")
	call(t, "GET", api+"/invocation/next", nil, nil)
	errBody, _ := json.Marshal(map[string]string{"errorMessage": "read failed", "errorType": "ReaderError"})
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", api+"/invocation/req-4/response", pr)
	req.Trailer = http.Header{headerErrorType: nil, trailerErrorBody: nil}
	go func() {
		pw.Write([]byte("partial"))
		req.Trailer.Set(headerErrorType, "ReaderError")
		req.Trailer.Set(trailerErrorBody, base64.StdEncoding.EncodeToString(errBody))
		pw.Close()
	}()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if a := <-inv.done; a.err == nil || a.err.Type != "ReaderError" || a.err.Message != "read failed" {
		t.Fatalf("trailer error: %+v", a.err)
	}

	// An init error after the first /next is refused.
	if code, _, _ = call(t, "POST", api+"/init/error", []byte(`{"errorMessage":"x","errorType":"y"}`), nil); code != 403 {
		t.Fatalf("late init error: %d", code)
	}
}

func TestInitErrorAPI(t *testing.T) {
	p, api := apiProcess(t)
	code, body, _ := call(t, "POST", api+"/init/error", []byte(`{"errorMessage":"no config","errorType":"Config.Missing"}`), nil)
	if code != 202 || body != `{"status":"OK"}` {
		t.Fatalf("init error: %d %s", code, body)
	}
	select {
	case <-p.initFailed:
	default:
		t.Fatal("initFailed not closed")
	}
	if p.alive() {
		t.Fatal("a process whose init failed is alive")
	}
	err := p.failure()
	if fe, ok := err.(*FunctionError); !ok || !fe.Init || fe.Type != "Config.Missing" || err.Error() != "init error: Config.Missing: no config" {
		t.Fatalf("failure = %v", err)
	}
}
