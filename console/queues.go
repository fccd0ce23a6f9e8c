package console

import (
	"net/http"
	"strings"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/alarms"
)

// overviewView is what the overview answers: the queues as the broker
// snapshots them (tidemq.QueueSnapshot, the one type of a queue's stats,
// with its JSON keys) and the alarms of those queues. The page works out
// what it shows from them (app.js, overviewOf): a queue's depth, its
// dead-letter queue's name, its source queues, its alarm state.
type overviewView struct {
	TimeMillis int64                  `json:"time"`
	Region     string                 `json:"region"`
	AccountID  string                 `json:"accountId"`
	AlarmsOn   bool                   `json:"alarmsOn"`
	Queues     []tidemq.QueueSnapshot `json:"queues"`
	// Alarms are the evaluated alarms of the queues listed.
	Alarms []alarms.Alarm `json:"alarms"`
	// Total is how many queues there are; when it is more than
	// OverviewLimit, Queues holds the first OverviewLimit in the
	// overview's order (dead-letter queues, firing ones, then by name),
	// plus the queue the page asked for (?queue=) and the queues whose
	// redrive policy names it (its sources), and Truncated is set.
	Total     int  `json:"total"`
	Truncated bool `json:"truncated,omitempty"`
	// DeadLetterQueues and Firing count every queue (not only those
	// listed): the dead-letter queues, and the queues with a firing
	// alarm.
	DeadLetterQueues int `json:"deadLetterQueues"`
	Firing           int `json:"firing"`
}

// OverviewLimit is how many queues the overview lists at most: with
// 100,000 queues the whole list was a 32 MB answer every poll.
const OverviewLimit = 1000

// overview answers GET /console/api/overview. It takes the queues one at
// a time (visit) and keeps copies of those it lists only (pick), so that
// at 100,000 queues an overview costs its 1,000 queues and one pass over
// the others, not a snapshot of each.
func (c *Console) overview(w http.ResponseWriter, r *http.Request) {
	var as []alarms.Alarm
	switch {
	case c.o.AlarmsFor != nil:
		as = c.o.AlarmsFor(nil) // the firing ones decide the order
	case c.o.Alarms != nil:
		as = c.o.Alarms()
	}
	firing := make(map[string]bool)
	for _, a := range as {
		if a.State == alarms.StateFiring {
			firing[a.Queue] = true
		}
	}
	want := r.URL.Query().Get("queue")
	p := newPick(firing, want, c.arnOf(want))
	c.visit(func(s *tidemq.QueueSnapshot) {
		if c.o.Visible != nil && !c.o.Visible(r, c.snapshotARN(s)) {
			return
		}
		p.offer(s)
	})
	ov := overviewView{
		TimeMillis: c.o.Clock.Now().UnixMilli(), Region: c.o.Region, AccountID: c.o.AccountID,
		AlarmsOn: c.o.Alarms != nil, Queues: p.queues(), Total: p.total, Truncated: p.total > OverviewLimit,
		DeadLetterQueues: p.deadLetterQueues, Firing: p.firingQueues,
	}
	names := make(map[string]bool, len(ov.Queues))
	for i := range ov.Queues {
		if ov.Queues[i].ARN == "" {
			ov.Queues[i].ARN = c.arnOf(ov.Queues[i].Name)
		}
		names[ov.Queues[i].Name] = true
	}
	if c.o.AlarmsFor != nil {
		// Only the listed queues' alarms, asked for by name: with 100,000
		// queues every alarm is some 400,000.
		listed := make([]string, 0, len(ov.Queues))
		for _, s := range ov.Queues {
			listed = append(listed, s.Name)
		}
		as = c.o.AlarmsFor(listed)
		alarms.Sort(as)
	}
	ov.Alarms = []alarms.Alarm{}
	for _, a := range as {
		if names[a.Queue] {
			ov.Alarms = append(ov.Alarms, a)
		}
	}
	writeJSON(w, http.StatusOK, ov)
}

// visit calls f with every queue's snapshot: through Options.Visit when
// the broker has one (no slice of every queue's snapshot; the snapshots
// carry no ARN), else from Broker.Snapshot.
func (c *Console) visit(f func(*tidemq.QueueSnapshot)) {
	if c.o.Visit != nil {
		// false: the engine failed or reloaded part way; its Snapshot
		// would answer nothing either, so the overview shows what it got.
		c.o.Visit(f)
		return
	}
	tidemq.VisitQueues(c.o.Broker, f)
}

// snapshotARN is s's ARN, made from its name when the snapshot came
// without one (Options.Visit).
func (c *Console) snapshotARN(s *tidemq.QueueSnapshot) string {
	if s.ARN != "" {
		return s.ARN
	}
	return c.arnOf(s.Name)
}

// arnOf is the ARN of the queue the broker names name ("" for ""), in the
// console's region and account (tidemq.RegionalQueueARN).
func (c *Console) arnOf(name string) string {
	if name == "" {
		return ""
	}
	region, account := c.o.Region, c.o.AccountID
	if region == "" {
		region = tidemq.DefaultRegion
	}
	if account == "" {
		account = tidemq.DefaultAccountID
	}
	return tidemq.RegionalQueueARN(region, account, name)
}

// queueName is the broker's name of the queue an ARN names: the plain name
// in the home region and account, "[<region>/][<account>:]<name>" otherwise
// (tidemq.QualifiedQueueName), so that two accounts' queues of one name
// are told apart.
func (c *Console) queueName(arn string) string {
	account := c.o.AccountID
	if account == "" {
		account = tidemq.DefaultAccountID
	}
	if name, ok := tidemq.QueueNameOfARN(arn, c.o.Region, account); ok {
		return name
	}
	a, ok := tidemq.ParseARN(arn)
	if !ok {
		return arn[strings.LastIndexByte(arn, ':')+1:]
	}
	return tidemq.RegionalQueueName(a.Region, c.o.Region, a.Resource)
}
