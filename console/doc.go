// Package console is tidemq's web console: a few static files (HTML, CSS
// and vanilla JavaScript modules, embedded in the binary, nothing fetched
// from elsewhere) and the small JSON API they read, served at /console on
// the serve port.
//
// What it shows: every queue with live depth and oldest-message-age
// sparklines (the page polls the overview, which answers the broker's
// Snapshot as tidemq.QueueSnapshot, the JSON of /tidemq/queues, with the
// queues' alarms; the page works out depth, sources and alarm state),
// dead-letter queues first with their alarm state, a message
// browser that peeks without receiving (bodies pretty-printed, SNS
// envelopes unwrapped, and a dead letter's story: receive count, source
// queue, history and the one-line explanation `tidemq dlq peek` prints),
// redrive (a message move task, or `tidemq dlq redrive`'s own code run
// message by message for marked redrives and orphaned DLQs, redrives.go)
// and purge behind a confirmation dialog,
// SNS topics with their subscriptions, and the triggers as their admin API
// reports them.
//
// # Access
//
// The package only provides handlers; cmd/tidemq registers them in its
// mountRoutes with the front door's rules (api/frontdoor):
//
//   - Assets (GET /console/...) are public routes: they hold no data and
//     change nothing, and a browser must load them before it can do anything
//     else. They carry a strict Content-Security-Policy (scripts and styles
//     from this origin only, no inline script, no framing).
//   - The data API (/console/api/...) is an admin route like /tidemq/...:
//     under --auth every call needs an AWS Signature V4 for the "tidemq"
//     service, which the console's JavaScript computes in the browser from
//     an access key typed into its sign-in form and kept in sessionStorage
//     (see static/sigv4.js). State-changing calls are POSTs with
//     Content-Type: application/json. Cross-origin requests are refused
//     and, without --auth, only requests for this machine's host names are
//     answered, as for every other route.
//
// The README's "Security" section says why signing in the browser was
// chosen over a session cookie.
package console
