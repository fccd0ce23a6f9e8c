// Package tidemqtest runs a complete tidemq inside a Go test: the SQS and
// SNS APIs, triggers, alarms, the admin API and the console, served on a
// random loopback port, in memory (or on a temporary directory), and
// stopped when the test ends.
//
//	srv := tidemqtest.NewServer(t)
//	client := sqs.NewFromConfig(srv.AWSConfig())
//
// The server is the one `tidemq serve` runs, mounted through the same
// route table (internal/server); only the opening of its parts differs:
// no flags, no PostgreSQL, no data directory unless WithDataDir asks for
// one.
//
// # Time
//
// By default the server runs on a fake clock (srv.Clock) that stands
// still until the test moves it: srv.Clock.Advance(31 * time.Second)
// makes a 30-second visibility timeout, a delay or a retention period
// pass at once, with no sleep. Everything that keeps a deadline reads it:
// the queues (visibility, delays, retention, deduplication, long polls),
// the SNS delivery retries and the alarms. What the clock does not drive:
// the triggers' poll loops, batching windows and function timeouts, and
// the network (HTTP timeouts) run in real time.
//
// A long poll (WaitTimeSeconds > 0) waits on the fake clock too. It ends
// as soon as a message can be received — one is sent, or the clock is
// advanced past the visibility timeout or delay that holds one back — or
// when the clock is advanced past its wait time, or when the request is
// cancelled. It never ends by itself in real time: a receive with
// WaitTimeSeconds 20 on an empty queue waits until the test sends a
// message, advances the clock by 20 seconds, or cancels the request's
// context. To advance the clock while another goroutine long-polls,
// first let the poll reach its wait (srv.Clock.WaitForTimers reports
// that a timer is waiting; see the examples), else the advance may come
// before the poll starts waiting and the poll then waits for a later one.
// WithRealClock runs the server on the system clock instead.
package tidemqtest
