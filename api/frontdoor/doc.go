// Package frontdoor is the one way into a tidemq server. Every route the
// server answers is registered here, each with its access rule, and every
// request passes the same checks before a handler sees it:
//
//  1. Cross-origin browser requests are refused (net/http's
//     CrossOriginProtection, applied to every method of the protocol routes:
//     SQS's Query protocol changes state on GET too). No AWS SDK or CLI is a
//     browser, so none of them is affected.
//  2. A request whose body may be large (over LargeBody bytes, or of unknown
//     length) waits for room in a shared budget of body memory, so that many
//     slow or half-sent bodies cannot hold more than Config.MaxBodyMemory
//     between them.
//  3. The access rule of the route:
//     - Protocol routes (the SQS and SNS APIs) verify AWS Signature V4
//     themselves, with the same credentials, because their errors must be
//     in the protocol's own format.
//     - Admin routes (/tidemq/...) are verified here, with the "tidemq"
//     signing scope. A state-changing admin call must not be a GET or HEAD
//     and must carry Content-Type: application/json, which a browser cannot
//     send cross-origin without a CORS preflight that tidemq never grants.
//     - Probe routes (/health, /metrics) are admin routes unless the
//     operator opens them (tidemq serve --auth-exempt), because Kubernetes
//     probes and Prometheus scrapes cannot sign.
//     - Asset routes (the web console's page, scripts and styles) are
//     public: they hold no data and change nothing, and a browser has to
//     load them before it can sign. Everything the console reads or
//     changes goes through admin routes, signed in the browser.
//
// Server wraps the mux in an http.Server with read, write and idle timeouts,
// a cap on open connections (the longest-idle keep-alive connection is
// closed to make room for a new one) and, optionally, TLS.
//
// The threat model is in the README ("Security").
package frontdoor
