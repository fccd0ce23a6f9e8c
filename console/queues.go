package console

import (
	"net/http"
	"sort"
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
}

// OverviewLimit is how many queues the overview lists at most: with
// 100,000 queues the whole list was a 32 MB answer every poll.
const OverviewLimit = 1000

func (c *Console) overview(w http.ResponseWriter, r *http.Request) {
	snaps := c.o.Broker.Snapshot()
	if c.o.Visible != nil {
		mine := snaps[:0:0]
		for _, s := range snaps {
			if c.o.Visible(r, s.ARN) {
				mine = append(mine, s)
			}
		}
		snaps = mine
	}
	var as []alarms.Alarm
	switch {
	case c.o.AlarmsFor != nil:
		as = c.o.AlarmsFor(nil) // the firing ones decide the order
	case c.o.Alarms != nil:
		as = c.o.Alarms()
	}
	ordered(snaps, as)
	ov := overviewView{
		TimeMillis: c.o.Clock.Now().UnixMilli(), Region: c.o.Region, AccountID: c.o.AccountID,
		AlarmsOn: c.o.Alarms != nil, Queues: snaps, Total: len(snaps),
	}
	if len(snaps) > OverviewLimit {
		ov.Queues, ov.Truncated = snaps[:OverviewLimit:OverviewLimit], true
		if want := r.URL.Query().Get("queue"); want != "" {
			ov.Queues = append(ov.Queues, asked(snaps, want)...)
		}
	}
	names := make(map[string]bool, len(ov.Queues))
	for _, s := range ov.Queues {
		names[s.Name] = true
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

// asked is what a truncated overview adds for the queue a page asked for,
// when the first OverviewLimit do not hold it: the queue, and the queues
// whose redrive policy names it (the page shows them as its sources). The
// snapshots are in the overview's order.
func asked(snaps []tidemq.QueueSnapshot, name string) []tidemq.QueueSnapshot {
	var arn string
	for _, s := range snaps {
		if s.Name == name {
			arn = s.ARN
		}
	}
	var out []tidemq.QueueSnapshot
	for i, s := range snaps {
		if arn != "" && i >= OverviewLimit && (s.ARN == arn || s.DeadLetterTarget == arn) {
			out = append(out, s)
		}
	}
	return out
}

// ordered sorts snapshots in the overview's order: dead-letter queues
// first, queues with a firing alarm first among their kind, then by name.
func ordered(snaps []tidemq.QueueSnapshot, as []alarms.Alarm) {
	firing := make(map[string]bool)
	for _, a := range as {
		if a.State == alarms.StateFiring {
			firing[a.Queue] = true
		}
	}
	sort.SliceStable(snaps, func(i, j int) bool {
		a, b := &snaps[i], &snaps[j]
		if a.IsDeadLetterQueue != b.IsDeadLetterQueue {
			return a.IsDeadLetterQueue
		}
		if fa, fb := firing[a.Name], firing[b.Name]; fa != fb {
			return fa
		}
		return a.Name < b.Name
	})
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
