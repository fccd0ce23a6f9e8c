// Package brokertest is the conformance suite that every tidemq.Broker must
// pass: the single-node engine on each of its stores today, a PostgreSQL
// broker later. The suite is the executable form of the SQS behaviour in
// reference/aws-sqs-sns-lambda.md (§4 limits, §5 semantics, §6 moves): a
// backend that passes it behaves, through the Broker interface, the way an
// AWS client expects SQS to behave.
//
// A backend's test wires it up through a Harness:
//
//	func TestConformance(t *testing.T) {
//		brokertest.Run(t, brokertest.Harness{
//			Open: func(t *testing.T, clk *clocktest.Clock) tidemq.Broker { ... },
//		})
//	}
//
// Besides the checks written in Go, the scripts of testdata/scenarios
// (scenario.go: a command, "----", the broker's answer) are checks too:
// each script runs against every driver, and go test -rewrite writes the
// answers of the broker under test into them.
//
// Every check is its own subtest, run on a fresh, empty broker and a fresh
// fake clock. Tests never sleep: time moves only when a test advances the
// clock, and a test that must know that a receive has reached its long-poll
// wait uses the clock's timer signal (clocktest.Clock.WaitForTimers). Calls
// that could hang on a broken backend (receives) are guarded by a real-time
// limit so that a bug fails the test instead of stalling it.
package brokertest

import (
	"os"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
)

// The region and account a Harness must open its brokers with; the suite
// checks queue ARNs against them.
const (
	Region    = "us-east-1"
	AccountID = tidemq.DefaultAccountID
)

// Start is the fake time at which every test begins. It is a whole second,
// so that epoch-second and epoch-millisecond timestamps are exact.
var Start = time.Unix(1_700_000_000, 0)

// guard is the real-time limit on a call that may block (a receive), and on
// waiting for a long poll to start or end. It only matters when a backend is
// broken: a correct one answers in microseconds.
const guard = 10 * time.Second

// SlowEnv names the environment variable that enables the slow checks (the
// 120,000 in-flight limit): set it to 1 to run them.
const SlowEnv = "TIDEMQ_CONFORMANCE_SLOW"

// Harness opens brokers for the suite.
//
// Open opens a fresh, empty broker for one test, on the given fake clock,
// for Region and AccountID. Reopen (optional, may be nil) closes b and opens
// the same data again on the same clock, to test that state survives a
// restart; the suite skips the restart checks when it is nil.
//
// The suite closes the broker it holds last (the one Open or Reopen
// returned most recently) when the test ends, so neither function should
// register a Close of its own; they may register other cleanups (t.TempDir
// and the like), which run after the suite's Close.
//
// OpenLimited (optional, may be nil) is Open with the limits of l: the
// queue limits group (queuelimits.go) checks that a broker enforces them
// as AWS and every other broker do, with caps small enough to reach in a
// test; the suite skips it when OpenLimited is nil.
type Harness struct {
	Open        func(t *testing.T, clk *clocktest.Clock) tidemq.Broker
	Reopen      func(t *testing.T, b tidemq.Broker, clk *clocktest.Clock) tidemq.Broker
	OpenLimited func(t *testing.T, clk *clocktest.Clock, l Limits) tidemq.Broker
}

// Limits are what Harness.OpenLimited opens a broker with: its in-flight
// caps (engine.Options.Inflight, postgres.Options.Inflight) and its
// --max-queue-bytes (MaxQueueBytes of the same options; 0: none).
type Limits struct {
	Inflight      tidemq.InflightLimits
	MaxQueueBytes int64
}

// check is one conformance check.
type check struct {
	name string
	fn   func(e *env)
}

// group is a set of checks about one concept.
type group struct {
	name   string
	checks []check
}

// groups lists every check of the suite, grouped by concept.
func groups() []group {
	return []group{
		{"Queues", queueChecks()},
		{"Attributes", attributeChecks()},
		{"Permissions", permissionChecks()},
		{"Standard", standardChecks()},
		{"Batch", batchChecks()},
		{"SendToQueues", sendToQueuesChecks()},
		{"Visibility", visibilityChecks()},
		{"Delay", delayChecks()},
		{"Counters", counterChecks()},
		{"Retention", retentionChecks()},
		{"Expiry", expiryChecks()},
		{"Requeue", requeueChecks()},
		{"GroupOrder", groupOrderChecks()},
		{"DedupKey", dedupKeyChecks()},
		{"FIFO", fifoChecks()},
		{"DeadLetter", dlqChecks()},
		{"Purge", purgeChecks()},
		{"LongPoll", longPollChecks()},
		{"Peek", peekChecks()},
		{"Move", moveChecks()},
		{"MoveTasks", moveTaskChecks()},
		{"Restart", restartChecks()},
		{"Concurrency", concurrencyChecks()},
		{"Limits", limitChecks()},
		{"QueueLimits", queueLimitChecks()},
		{"Params", paramChecks()},
		{"Operations", operationChecks()},
		{"SnapshotPages", snapshotPageChecks()},
		{"Scenarios", scenarioChecks()},
	}
}

// Run runs the whole conformance suite against the brokers h opens.
func Run(t *testing.T, h Harness) {
	if h.Open == nil {
		t.Fatal("brokertest: Harness.Open is nil")
	}
	for _, g := range groups() {
		t.Run(g.name, func(t *testing.T) {
			for _, c := range g.checks {
				t.Run(c.name, func(t *testing.T) {
					c.fn(newEnv(t, h))
				})
			}
		})
	}
}

// slow skips t unless the slow checks were asked for.
func slow(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("slow check skipped in -short mode")
	}
	if os.Getenv(SlowEnv) != "1" {
		t.Skipf("slow check: set %s=1 to run it", SlowEnv)
	}
}
