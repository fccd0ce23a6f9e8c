package e2e

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/tidemq/tidemq/console"
)

// The web console in a real browser: headless Chromium driven by chromedp,
// against the binary. Chromium is required when CI=true (.ci/run installs
// Debian's chromium) and the tests skip without it otherwise.

var updateScreenshots = flag.Bool("update-screenshots", false, "write the web console's screenshots to docs/console/*.png (TestConsoleScreenshots)")

// stepTimeout bounds one browser step (a navigation and its waits).
const stepTimeout = 30 * time.Second

// chromiumPath finds Chromium, or skips (fails on CI) without it.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is required on CI (.ci/run installs it)")
	}
	t.Skip("chromium not installed")
	return ""
}

// browser is one headless Chromium with one tab. It collects what the page
// should never produce: uncaught exceptions and Content-Security-Policy
// violations (an inline script or style would be one).
type browser struct {
	t   *testing.T
	ctx context.Context

	mu       sync.Mutex
	problems []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	path := chromiumPath(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 860),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelTab(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx}
	exceptions := chromedp.Events(ctx, runtime.ExceptionThrown)
	logs := chromedp.Events(ctx, cdplog.EntryAdded)
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	go func() {
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			b.problem("exception: " + ev.ExceptionDetails.Text + " " + describeException(ev))
		}
	}()
	go func() {
		for ev, err := range logs {
			if err != nil {
				return
			}
			if e := ev.Entry; e != nil && (e.Source == cdplog.EntrySourceSecurity || strings.Contains(e.Text, "Content Security Policy")) {
				b.problem(string(e.Source) + ": " + e.Text)
			}
		}
	}()
	return b
}

func describeException(ev runtime.EventExceptionThrown) string {
	if d := ev.ExceptionDetails; d != nil && d.Exception != nil {
		return d.Exception.Description
	}
	return ""
}

func (b *browser) problem(s string) {
	b.mu.Lock()
	b.problems = append(b.problems, s)
	b.mu.Unlock()
}

// checkClean fails the test if the page threw or broke its policy.
func (b *browser) checkClean() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.problems {
		b.t.Errorf("console page: %s", p)
	}
}

// do runs actions, failing the test with what it was doing.
func (b *browser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// text returns the text of the first element matching a CSS selector.
func (b *browser) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// count returns how many elements match a CSS selector now.
func (b *browser) count(sel string) int {
	b.t.Helper()
	n, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](fmt.Sprintf("document.querySelectorAll(%q).length", sel)))
	if err != nil {
		b.t.Fatalf("count %s: %v", sel, err)
	}
	return n
}

// waitFor polls a JavaScript condition until it is true.
func (b *browser) waitFor(what, js string) {
	b.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](js))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			page, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`'dialog open: ' + document.getElementById('confirm').open +
				', returnValue: ' + document.getElementById('confirm').returnValue + '\n' + document.body.innerText.slice(0, 3000)`))
			b.t.Fatalf("waiting for %s (%s): %v; the page reads:\n%s", what, js, err, page)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// screenshot writes a PNG of the page to docs/console/name.png.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	writeDoc(b.t, name, png)
}

// writeDoc writes a PNG to docs/console/name.png.
func writeDoc(t *testing.T, name string, png []byte) {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "docs", "console")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote docs/console/%s.png (%d bytes)", name, len(png))
}

// sqsClient is the SDK's SQS client for a server, with MD5 checks on.
func sqsClient(s *server, key, secret string) *sqs.Client {
	return sqs.New(sqs.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(s.url),
		Credentials: credentials.NewStaticCredentialsProvider(key, secret, ""),
	})
}

// queueWithDLQ creates name and name-dlq, name redriving to name-dlq after
// maxReceives receives, and returns their URLs. name's visibility timeout
// is 0, so that a received message can be received again at once.
func queueWithDLQ(t *testing.T, c *sqs.Client, name string, maxReceives int) (src, dlq string) {
	t.Helper()
	ctx := context.Background()
	d, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name + "-dlq")})
	if err != nil {
		t.Fatal(err)
	}
	attrs, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: d.QueueUrl,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	policy := fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":"%d"}`, attrs.Attributes["QueueArn"], maxReceives)
	s, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name),
		Attributes: map[string]string{"RedrivePolicy": policy, "VisibilityTimeout": "0"}})
	if err != nil {
		t.Fatal(err)
	}
	return *s.QueueUrl, *d.QueueUrl
}

// depth is ApproximateNumberOfMessages (visible) of a queue.
func depth(t *testing.T, c *sqs.Client, url string) int {
	t.Helper()
	out, err := c.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages}})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	fmt.Sscan(out.Attributes["ApproximateNumberOfMessages"], &n)
	return n
}

// deadLetter sends bodies to src (made by queueWithDLQ) and receives them
// until all of them have moved to dlq.
func deadLetter(t *testing.T, c *sqs.Client, src, dlq string, bodies ...string) {
	t.Helper()
	for _, b := range bodies {
		if _, err := c.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(src), MessageBody: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
	}
	drainToDLQ(t, c, src, dlq, len(bodies))
}

// drainToDLQ receives from src until dlq holds n messages.
func drainToDLQ(t *testing.T, c *sqs.Client, src, dlq string, n int) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(15 * time.Second)
	for depth(t, c, dlq) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d messages dead-lettered", depth(t, c, dlq), n)
		}
		if _, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(src), MaxNumberOfMessages: 10}); err != nil {
			t.Fatal(err)
		}
	}
}

// receiveAll receives every message of a queue (deleting none) and returns
// the bodies, sorted.
func receiveAll(t *testing.T, c *sqs.Client, url string, want int) []string {
	t.Helper()
	var bodies []string
	deadline := time.Now().Add(15 * time.Second)
	for len(bodies) < want && time.Now().Before(deadline) {
		out, err := c.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(url),
			MaxNumberOfMessages: 10, VisibilityTimeout: 60, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			bodies = append(bodies, *m.Body)
		}
	}
	slices.Sort(bodies)
	return bodies
}

// The acceptance test: messages dead-lettered with the SDK are
// seen in the console's message browser with their story, a click on
// Redrive and a confirmation puts them back in their source queue, and
// the SDK receives them there.
func TestConsoleRedriveByClicking(t *testing.T) {
	b := newBrowser(t)
	s := startServer(t)
	c := sqsClient(s, "AKIDCONSOLE", "whatever")
	src, dlq := queueWithDLQ(t, c, "orders", 1)
	bodies := []string{`{"order":1,"sku":"A-1"}`, `{"order":2,"sku":"B-2"}`, `{"order":3,"sku":"C-3"}`}
	deadLetter(t, c, src, dlq, bodies...)

	b.do("open the console", chromedp.Navigate(s.url+"/console/"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-queue="orders-dlq"] a.qname`)))
	// The summary counts with the right number: two queues, one DLQ.
	if sum := b.text(`.summary`); !strings.Contains(sum, "2 queues") || !strings.Contains(sum, "1 dead-letter queue") || strings.Contains(sum, "1 dead-letter queues") {
		t.Errorf("summary %q, want 2 queues and 1 dead-letter queue", sum)
	}
	// Dead-letter queues come first.
	if first := b.text(`table.queues tbody tr`); !strings.Contains(first, "orders-dlq") {
		t.Errorf("first queue row %q, want the dead-letter queue first", first)
	}
	b.do("open the DLQ", chromedp.Click(chromedp.CSS(`tr[data-queue="orders-dlq"] a.qname`)),
		chromedp.WaitVisible(chromedp.CSS(`#queue-page[data-queue="orders-dlq"] #redrive`)),
		chromedp.WaitVisible(chromedp.CSS(`article.message`)))
	b.waitFor("three messages", `document.querySelectorAll('article.message').length === 3`)
	if why := b.text(`article.message .explain`); !strings.Contains(why, "dead-lettered from orders") || !strings.Contains(why, "receive") {
		t.Errorf("the dead-letter story reads %q", why)
	}
	if body := b.text(`article.message pre.body`); !strings.Contains(body, `"order": 1`) {
		t.Errorf("first body shown as %q, want pretty-printed JSON", body)
	}

	// Cancel first: nothing moves.
	b.do("cancel a redrive", chromedp.Click(chromedp.ID("redrive")), chromedp.WaitVisible(chromedp.CSS(`#confirm[open]`)),
		chromedp.Click(chromedp.ID("confirm-cancel")))
	b.waitFor("the dialog to close", `!document.getElementById('confirm').open`)
	if n := depth(t, c, dlq); n != 3 {
		t.Fatalf("after a cancelled redrive the DLQ holds %d messages, want 3", n)
	}

	// Cancel and ask again at once: the first dialog's close event, which
	// the browser queues, must not answer the second question.
	b.do("redrive", chromedp.Click(chromedp.ID("redrive")), chromedp.WaitVisible(chromedp.CSS(`#confirm[open]`)),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('confirm-cancel').click(); document.getElementById('redrive').click()`))
	b.waitFor("the dialog to open again", `document.getElementById('confirm').open`)
	if title := b.text("#confirm-title"); !strings.Contains(title, "orders-dlq") {
		t.Errorf("confirmation title %q", title)
	}
	b.do("confirm", chromedp.Click(chromedp.ID("confirm-ok")))
	b.waitFor("the redrive to start", `document.getElementById('action-result').textContent.includes('Redrive started')`)

	got := receiveAll(t, c, src, len(bodies))
	want := slices.Clone(bodies)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the source queue holds %q after the redrive, want %q", got, want)
	}
	if n := depth(t, c, dlq); n != 0 {
		t.Errorf("the DLQ still holds %d visible messages", n)
	}
	b.waitFor("the move task to show as completed", `document.querySelector('#tasks tr.task-completed') !== null`)
	b.checkClean()
}

// Under --auth: the page loads unsigned, asks for a key, refuses a wrong
// secret, and with the right one every page renders; the data API refuses
// an unsigned request, from the page itself and from outside.
func TestConsoleSignInWithAuth(t *testing.T) {
	b := newBrowser(t)
	s := startServer(t, "--auth", "--credentials", secKey+":"+secSecret)
	c := sqsClient(s, secKey, secSecret)
	queueWithDLQ(t, c, "billing", 3)

	// Outside the browser: the page is public, the data is not.
	resp, err := httpClient.Get(s.url + "/console/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") ||
		resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("GET /console/ under --auth: %d, CSP %q, X-Frame-Options %q", resp.StatusCode,
			resp.Header.Get("Content-Security-Policy"), resp.Header.Get("X-Frame-Options"))
	}
	for _, path := range []string{"/console/api/overview", "/console/api/messages?queue=billing-dlq", "/console/api/topics"} {
		if status, body := rawRequest(t, http.MethodGet, s.url+path, "", ""); status != http.StatusForbidden || !strings.Contains(body, "MissingAuthenticationToken") {
			t.Errorf("unsigned GET %s: %d %s, want 403 MissingAuthenticationToken", path, status, body)
		}
	}
	if status, body := rawRequest(t, http.MethodPost, s.url+"/console/api/purge", "application/json", `{"queue":"billing"}`); status != http.StatusForbidden {
		t.Errorf("unsigned purge: %d %s, want 403", status, body)
	}

	b.do("open the console", chromedp.Navigate(s.url+"/console/"), chromedp.WaitVisible(chromedp.ID("login")))
	if *updateScreenshots {
		b.screenshot("login")
	}
	b.do("sign in with a wrong secret", chromedp.SendKeys(chromedp.ID("akid"), secKey), chromedp.SendKeys(chromedp.ID("secret"), "wrong"),
		chromedp.Click(chromedp.ID("signin")), chromedp.WaitVisible(chromedp.ID("login-error")))
	if msg := b.text("#login-error"); !strings.Contains(msg, "refused") {
		t.Errorf("wrong secret: %q", msg)
	}
	b.do("sign in", chromedp.SendKeys(chromedp.ID("akid"), secKey), chromedp.SendKeys(chromedp.ID("secret"), secSecret),
		chromedp.Click(chromedp.ID("signin")), chromedp.WaitVisible(chromedp.CSS(`tr[data-queue="billing-dlq"]`)))
	if who := b.text("#who"); !strings.Contains(who, secKey) {
		t.Errorf("signed in as %q", who)
	}
	for _, p := range []struct{ hash, sel string }{
		{"#/queue/billing", `#queue-page[data-queue="billing"] #messages .empty`},
		{"#/topics", "#topics-page"},
		{"#/triggers", "#triggers-page"},
		{"#/queues", `tr[data-queue="billing"]`},
	} {
		b.do("open "+p.hash, chromedp.Navigate(s.url+"/console/"+p.hash), chromedp.WaitVisible(chromedp.CSS(p.sel)))
	}
	// The page's own unsigned fetch is refused too: only the signature
	// opens the data, not the page's origin.
	status, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](`fetch('/console/api/overview').then(r => r.status)`, chromedp.EvalAwaitPromise))
	if err != nil || status != http.StatusForbidden {
		t.Errorf("an unsigned fetch from the signed-in page: %d %v, want 403", status, err)
	}
	// A signed POST from the page works: a purge through the dialog.
	b.do("purge", chromedp.Navigate(s.url+"/console/#/queue/billing"), chromedp.WaitVisible(chromedp.ID("purge")),
		chromedp.Click(chromedp.ID("purge")), chromedp.WaitVisible(chromedp.CSS(`#confirm[open]`)), chromedp.Click(chromedp.ID("confirm-ok")))
	b.waitFor("the purge", `document.getElementById('action-result').textContent === 'Purged.'`)
	b.do("sign out", chromedp.Click(chromedp.ID("signout")), chromedp.WaitVisible(chromedp.ID("login")))
	stored, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](`sessionStorage.length`))
	if err != nil || stored != 0 {
		t.Errorf("after signing out sessionStorage holds %d items (%v)", stored, err)
	}
	b.checkClean()
}

// The console's data API under the same browser protections as the rest:
// without --auth a cross-origin request and a request for another host
// are refused, and a state-changing call must be a JSON POST.
func TestConsoleBrowserProtections(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.createQueue(t, "q", nil)
	for _, tc := range []struct {
		method, path, ct, body string
		header                 []string
		want                   int
	}{
		{http.MethodGet, "/console/api/overview", "", "", nil, http.StatusOK},
		{http.MethodGet, "/console/api/overview", "", "", []string{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}, http.StatusForbidden},
		{http.MethodPost, "/console/api/purge", "text/plain", `{"queue":"q"}`, nil, http.StatusUnsupportedMediaType},
		{http.MethodPost, "/console/api/purge", "application/json", `{"queue":"q"}`, []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{http.MethodGet, "/console/api/purge?queue=q", "", "", nil, http.StatusNotFound},
	} {
		if status, body := rawRequest(t, tc.method, s.url+tc.path, tc.ct, tc.body, tc.header...); status != tc.want {
			t.Errorf("%s %s %s %v: %d %s, want %d", tc.method, tc.path, tc.ct, tc.header, status, body, tc.want)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, s.url+"/console/api/overview", nil)
	req.Host = "rebind.attacker.example"
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("console API for another host: %d, want 421", resp.StatusCode)
	}
	var ov struct{ Queues []struct{ Name string } }
	status, body := rawRequest(t, http.MethodGet, s.url+"/console/api/overview", "", "")
	if err := json.Unmarshal([]byte(body), &ov); err != nil || status != http.StatusOK || len(ov.Queues) != 1 {
		t.Errorf("overview after the refused purges: %d %s", status, body)
	}
}

// The page's SHA-256 and HMAC (console/static/sha256.js, what SigV4 in the
// browser rests on) agree with Go's for every length around the block
// boundaries, where padding mistakes hide.
func TestConsoleSigningPrimitives(t *testing.T) {
	b := newBrowser(t)
	s := startServer(t)
	b.do("open the console", chromedp.Navigate(s.url+"/console/"), chromedp.WaitVisible(chromedp.CSS("#queues-page")))
	got, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`import('./sha256.js').then(({ sha256, hmac, hex }) => {
		const out = [];
		for (let n = 0; n <= 300; n++) out.push(hex(sha256('é'.repeat(n % 7) + 'x'.repeat(n))));
		out.push(hex(hmac('key', 'The quick brown fox jumps over the lazy dog')));
		out.push(hex(hmac('k'.repeat(100), 'message')));
		return out;
	})`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for n := 0; n <= 300; n++ {
		sum := sha256.Sum256([]byte(strings.Repeat("é", n%7) + strings.Repeat("x", n)))
		want = append(want, hex.EncodeToString(sum[:]))
	}
	for _, kv := range [][2]string{{"key", "The quick brown fox jumps over the lazy dog"}, {strings.Repeat("k", 100), "message"}} {
		m := hmac.New(sha256.New, []byte(kv[0]))
		m.Write([]byte(kv[1]))
		want = append(want, hex.EncodeToString(m.Sum(nil)))
	}
	if len(got) != len(want) {
		t.Fatalf("%d digests, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("digest %d: page %s, Go %s", i, got[i], want[i])
		}
	}
	b.checkClean()
}

// The triggers page shows the recent invocations the trigger admin API
// lists (RecentInvocations on each trigger, latest first). The API is
// stubbed here with the shape the trigger package gives them, so the page
// is checked whatever the server's trigger package reports today.
func TestConsoleTriggerInvocations(t *testing.T) {
	b := newBrowser(t)
	mux := http.NewServeMux()
	mux.Handle("GET /console/", console.Assets())
	mux.HandleFunc("GET /console/api/overview", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"time":0,"region":"us-east-1","accountId":"000000000000","alarmsOn":false,"queues":[]}`))
	})
	mux.HandleFunc("GET /tidemq/triggers", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"Triggers":[
		  {"Name":"with-history","Queue":"q","Target":{"URL":"http://fn/"},"State":"Enabled","Stats":{"Invocations":2},
		   "RecentInvocations":[
		     {"Time":"2026-12-03T08:00:02Z","BatchSize":3,"DurationSeconds":0.042,"Outcome":"partial_failure","FailedMessages":1},
		     {"Time":"2026-12-03T08:00:01Z","BatchSize":10,"DurationSeconds":1.5,"Outcome":"error","FailedMessages":10,"Error":"HTTP 502: upstream down"}]},
		  {"Name":"without","Queue":"q","Target":{"Command":["./handle"]},"State":"Disabled","Stats":{}}]}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	b.do("open the triggers", chromedp.Navigate(srv.URL+"/console/#/triggers"),
		chromedp.WaitVisible(chromedp.CSS(`[data-trigger="with-history"] table.invocations`)))
	if n := b.count(`[data-trigger="with-history"] table.invocations tbody tr`); n != 2 {
		t.Errorf("%d invocation rows, want 2", n)
	}
	row := b.text(`[data-trigger="with-history"] table.invocations tbody tr:nth-child(2)`)
	for _, want := range []string{"2026-12-03 08:00:01.000 UTC", "error", "10", "1.50 s", "HTTP 502: upstream down"} {
		if !strings.Contains(row, want) {
			t.Errorf("second invocation row %q lacks %q", row, want)
		}
	}
	if first := b.text(`[data-trigger="with-history"] table.invocations tbody tr`); !strings.Contains(first, "42 ms") || !strings.Contains(first, "partial_failure") {
		t.Errorf("first invocation row %q", first)
	}
	if msg := b.text(`[data-trigger="without"] .no-invocations`); !strings.Contains(msg, "No invocations") {
		t.Errorf("a trigger without a history: %q", msg)
	}
	b.checkClean()
}

// The overview's table is worked out by the page from the broker's
// snapshots (the API answers QueueSnapshot as is): the depth cell is
// visible + in flight + delayed, a dead-letter queue lists its sources and
// a source names its dead-letter queue.
func TestConsoleOverviewDepth(t *testing.T) {
	b := newBrowser(t)
	s := startServer(t)
	c := sqsClient(s, "AKIDCONSOLE", "whatever")
	ctx := context.Background()
	queueWithDLQ(t, c, "shop", 5)
	q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("depthq")})
	if err != nil {
		t.Fatal(err)
	}
	for i, delay := range []int32{0, 0, 0, 300} {
		if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String(fmt.Sprint("m", i)), DelaySeconds: delay}); err != nil {
			t.Fatal(err)
		}
	}
	for inFlight := 0; inFlight < 2; {
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, MaxNumberOfMessages: 1, VisibilityTimeout: 600})
		if err != nil {
			t.Fatal(err)
		}
		inFlight += len(out.Messages)
	}

	b.do("open the console", chromedp.Navigate(s.url+"/console/"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-queue="depthq"] td.depth`)))
	b.waitFor("depth 4", `document.querySelector('tr[data-queue="depthq"] td.depth').textContent === '4'`)
	cells, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('tr[data-queue="depthq"] td.n')].map((td) => td.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) < 4 || cells[0] != "4" || cells[1] != "1" || cells[2] != "2" || cells[3] != "1" {
		t.Errorf("depthq's depth, visible, in flight, delayed cells %q, want 4, 1, 2, 1", cells)
	}
	if got := b.text(`tr[data-queue="shop-dlq"] td:last-child`); got != "← shop" {
		t.Errorf("shop-dlq's redrive cell %q, want its source", got)
	}
	if got := b.text(`tr[data-queue="shop"] td:last-child`); got != "→ shop-dlq (5×)" {
		t.Errorf("shop's redrive cell %q, want its dead-letter queue", got)
	}
	b.checkClean()
}
