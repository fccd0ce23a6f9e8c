package e2e

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq/internal/testcert"
)

// The attacks of issue 14 against the binary, each of which worked before
// the front door: every route answers only signed requests under --auth,
// browsers cannot reach across origins, and connections are bounded.

const (
	secKey    = "AKIDTEST"
	secSecret = "secret123"
)

// rawRequest sends one unsigned request and returns the status and body.
func rawRequest(t *testing.T, method, url, contentType, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return sendRequest(t, httpClient, req)
}

// sendRequest sends req with c and returns the status and body.
func sendRequest(t *testing.T, c *http.Client, req *http.Request) (int, string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestSecurityEveryRouteNeedsASignature(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "ran")
	s := startServer(t, "--auth", "--credentials", secKey+":"+secSecret, "--allow-trigger-commands")
	s.createQueueSigned(t, "victim")

	// The trigger that used to post a queue's messages to an outside URL,
	// and the one that ran a command as the server's user.
	for _, trig := range []string{
		`{"Name":"exfil","Queue":"victim","Target":{"URL":"http://127.0.0.1:1/steal","Headers":{"Authorization":"Bearer x"}}}`,
		`{"Name":"pwn","Queue":"victim","Target":{"Command":["/bin/sh","-c","touch ` + marker + `"]}}`,
	} {
		status, body := rawRequest(t, http.MethodPost, s.url+"/tidemq/triggers", "application/json", trig)
		if status != http.StatusForbidden || !strings.Contains(body, "MissingAuthenticationToken") {
			t.Errorf("unsigned POST /tidemq/triggers: %d %s, want 403 MissingAuthenticationToken", status, body)
		}
	}
	for _, path := range []string{"/tidemq/triggers", "/tidemq/triggers/exfil", "/tidemq/queues", "/tidemq/alarms", "/metrics", "/health"} {
		if status, body := rawRequest(t, http.MethodGet, s.url+path, "", ""); status != http.StatusForbidden {
			t.Errorf("unsigned GET %s: %d %s, want 403", path, status, body)
		}
	}
	// The same calls, signed by tidemq's own commands, go through.
	env := clientEnv(secKey, secSecret)
	if out, errOut, code := runTidemq(t, env, "trigger", "list", "--endpoint", s.url); code != 0 || strings.Contains(out, "exfil") {
		t.Errorf("signed tidemq trigger list: exit %d, %s %s", code, out, errOut)
	}
	if _, errOut, code := runTidemq(t, env, "alarms", "--endpoint", s.url); code != 0 {
		t.Errorf("signed tidemq alarms: exit %d: %s", code, errOut)
	}
	if out, errOut, code := runTidemq(t, env, "top", "--once", "--endpoint", s.url, "--source", "tidemq"); code != 0 || !strings.Contains(out, "victim") {
		t.Errorf("signed tidemq top --once: exit %d: %s %s", code, out, errOut)
	}
	bad := clientEnv(secKey, "wrong")
	if _, errOut, code := runTidemq(t, bad, "trigger", "list", "--endpoint", s.url); code == 0 || !strings.Contains(errOut, "signature") {
		t.Errorf("tidemq trigger list with a wrong secret: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("an unsigned request ran a command")
	}
}

func TestSecurityAuthExemptOpensOnlyProbes(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--auth", "--credentials", secKey+":"+secSecret, "--auth-exempt", "health,metrics")
	for _, path := range []string{"/health", "/metrics"} {
		if status, body := rawRequest(t, http.MethodGet, s.url+path, "", ""); status != http.StatusOK {
			t.Errorf("unsigned GET %s with --auth-exempt: %d %s, want 200", path, status, body)
		}
	}
	if status, _ := rawRequest(t, http.MethodGet, s.url+"/tidemq/queues", "", ""); status != http.StatusForbidden {
		t.Errorf("unsigned GET /tidemq/queues with --auth-exempt health,metrics: %d, want 403", status)
	}
}

// Without --auth a browser page must still not reach the server: a
// cross-origin form post (text/plain, no preflight) used to create a trigger.
func TestSecurityCrossOriginBrowserRefused(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	trig := `{"Name":"csrf","Queue":"q","Target":{"URL":"http://127.0.0.1:1/"}}`
	for _, tc := range []struct {
		method, path, ct, body string
		header                 []string
	}{
		{http.MethodPost, "/tidemq/triggers", "text/plain", trig, []string{"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"}},
		{http.MethodPost, "/tidemq/triggers", "text/plain", trig, nil}, // an old browser, or curl: still not JSON
		{http.MethodPost, "/", "application/x-www-form-urlencoded", "Action=CreateQueue&QueueName=csrf", []string{"Sec-Fetch-Site", "cross-site"}},
		{http.MethodGet, "/?Action=CreateQueue&QueueName=csrf", "", "", []string{"Sec-Fetch-Site", "cross-site"}},
	} {
		status, body := rawRequest(t, tc.method, s.url+tc.path, tc.ct, tc.body, tc.header...)
		if status < 400 {
			t.Errorf("%s %s %v: %d %s, want it refused", tc.method, tc.path, tc.header, status, body)
		}
	}
	if status, out := s.call(t, "ListQueues", map[string]any{}); status != http.StatusOK || strings.Contains(fmt.Sprint(out), "csrf") {
		t.Errorf("after the cross-origin attempts, ListQueues: %d %v", status, out)
	}
	if _, body := rawRequest(t, http.MethodGet, s.url+"/tidemq/triggers", "", ""); strings.Contains(body, "csrf") {
		t.Errorf("a cross-origin post created a trigger: %s", body)
	}
}

// Idle keep-alive connections used to pile up until no descriptor was
// left: at --max-connections the longest-idle ones are closed, and a new
// client is still served.
func TestSecurityIdleConnectionsCannotLockOut(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--max-connections", "20")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range 60 {
		c, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, c)
		fmt.Fprint(c, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("connection %d (past the cap of 20 idle ones) got no answer: %v", i, err)
		}
		resp.Body.Close()
	}
	if status, _ := s.call(t, "ListQueues", map[string]any{}); status != http.StatusOK {
		t.Errorf("a new client after 60 idle connections: %d", status)
	}
}

// --tls-cert and --tls-key: the AWS CLI talks HTTPS to it with the
// certificate as its CA bundle, and queue URLs say https.
func TestSecurityTLS(t *testing.T) {
	t.Parallel()
	requireAWS(t)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	testcert.Write(t, certFile, keyFile, "tidemq-e2e")
	s := startTLSServer(t, certFile, keyFile)
	cli := newCLI(t, s)
	var out queueURLOut
	cli.ok(t, &out, "--ca-bundle", certFile, "create-queue", "--queue-name", "over-tls")
	if !strings.HasPrefix(out.QueueUrl, "https://") {
		t.Errorf("queue URL over TLS = %q, want https://", out.QueueUrl)
	}
	if r := cli.run(t, "list-queues"); r.code == 0 {
		t.Errorf("the AWS CLI trusted a self-signed certificate without --ca-bundle: %s", r)
	}
	// tidemq's own commands honour AWS_CA_BUNDLE like the SDKs.
	env := append(clientEnv("any", "any"), "AWS_CA_BUNDLE="+certFile)
	if _, errOut, code := runTidemq(t, env, "alarms", "--endpoint", s.url); code != 0 {
		t.Errorf("tidemq alarms over TLS with AWS_CA_BUNDLE: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runTidemq(t, env, "top", "--once", "--endpoint", s.url); code != 0 {
		t.Errorf("tidemq top over TLS with AWS_CA_BUNDLE: exit %d: %s", code, errOut)
	}
}

// startTLSServer starts tidemq with TLS and points s.url at https. It
// cannot use launch's health wait, which speaks plain HTTP.
func startTLSServer(t *testing.T, certFile, keyFile string) *server {
	t.Helper()
	pem, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	s := launchNoWait(t, []string{"serve", "--listen", "127.0.0.1:0", "--in-memory", "--tls-cert", certFile, "--tls-key", keyFile}, nil)
	s.url = "https://" + s.addr
	deadline := time.Now().Add(startTimeout)
	for {
		resp, err := client.Get(s.url + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s/health over TLS: %v", s.url, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return s
}

// createQueueSigned creates a queue with the AWS CLI signed by the
// security tests' keys.
func (s *server) createQueueSigned(t *testing.T, name string) {
	t.Helper()
	requireAWS(t)
	newCLI(t, s).withKeys(secKey, secSecret).ok(t, nil, "create-queue", "--queue-name", name)
}

// The data directory holds message bodies, trigger secrets and the SNS
// signing key: nothing in it is readable by other users of the machine.
func TestSecurityDataDirIsPrivate(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(t.TempDir(), "data") // does not exist yet
	s := startServer(t, "--data-dir", dataDir)
	s.send(t, s.createQueue(t, "q", nil), "secret body")
	s.stop()
	err := filepath.Walk(dataDir, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is %s: other users can read it", path, fi.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// DNS rebinding: a page re-points its own domain at 127.0.0.1, and the
// browser's requests look same-origin. Without --auth only IP addresses,
// localhost and --allowed-hosts are answered.
func TestSecurityDNSRebindingRefused(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--allowed-hosts", "tidemq.test")
	for host, want := range map[string]int{"rebind.attacker.example": http.StatusMisdirectedRequest, "tidemq.test": http.StatusOK} {
		req, _ := http.NewRequest(http.MethodPost, s.url+"/tidemq/triggers", strings.NewReader(
			`{"Name":"r","Queue":"q","Target":{"URL":"http://127.0.0.1:1/"}}`))
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", "http://"+host)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		resp, err := httpClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.StatusCode; (want == http.StatusOK) != (got != http.StatusMisdirectedRequest) {
			t.Errorf("Host %s: %d, want %d", host, got, want)
		}
	}
}
