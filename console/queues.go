package console

import (
	"net/http"
	"sort"
	"strings"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/alarms"
)

// queueView is one queue in the overview.
type queueView struct {
	Name     string `json:"name"`
	ARN      string `json:"arn"`
	FIFO     bool   `json:"fifo"`
	Visible  int    `json:"visible"`
	InFlight int    `json:"inFlight"`
	Delayed  int    `json:"delayed"`
	// Depth is every message the queue holds: visible + delayed + in flight.
	Depth            int     `json:"depth"`
	OldestAgeSeconds float64 `json:"oldestAgeSeconds"`
	RetentionSeconds int     `json:"retentionSeconds"`
	DeadLetterQueue  bool    `json:"deadLetterQueue"`
	// DeadLetterTarget is the name of the queue's own dead-letter queue.
	DeadLetterTarget string `json:"deadLetterTarget,omitempty"`
	MaxReceiveCount  int    `json:"maxReceiveCount,omitempty"`
	// Sources are the queues whose redrive policy names this one.
	Sources []string `json:"sources,omitempty"`
	// Alarm is FIRING when one of the queue's alarms fires, OK when all
	// are evaluated and quiet, "" when none is (alarms off, or not yet).
	Alarm  string            `json:"alarm"`
	Alarms []alarms.Alarm    `json:"alarms,omitempty"`
	Stats  tidemq.QueueStats `json:"stats"` // the broker's counters, as /tidemq/queues shows them
}

type overviewView struct {
	TimeMillis int64       `json:"time"`
	Region     string      `json:"region"`
	AccountID  string      `json:"accountId"`
	AlarmsOn   bool        `json:"alarmsOn"`
	Queues     []queueView `json:"queues"`
	// Total is how many queues there are; when it is more than
	// OverviewLimit, Queues holds the first OverviewLimit in the
	// overview's order (dead-letter queues, firing ones, then by name),
	// plus the queue the page asked for (?queue=), and Truncated is set.
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
	views := c.queueViews(snaps, as)
	ov := overviewView{
		TimeMillis: c.o.Clock.Now().UnixMilli(), Region: c.o.Region, AccountID: c.o.AccountID,
		AlarmsOn: c.o.Alarms != nil, Queues: views, Total: len(views),
	}
	if len(views) > OverviewLimit {
		ov.Queues, ov.Truncated = views[:OverviewLimit], true
		if want := r.URL.Query().Get("queue"); want != "" {
			for _, v := range views[OverviewLimit:] {
				if v.Name == want {
					ov.Queues = append(ov.Queues[:OverviewLimit:OverviewLimit], v)
					break
				}
			}
		}
	}
	if c.o.AlarmsFor != nil {
		c.listedAlarms(ov.Queues)
	}
	writeJSON(w, http.StatusOK, ov)
}

// listedAlarms sets the alarms of the queues the overview lists, asked
// for by name.
func (c *Console) listedAlarms(views []queueView) {
	names := make([]string, len(views))
	at := make(map[string]int, len(views))
	for i := range views {
		names[i], at[views[i].Name] = views[i].Name, i
		views[i].Alarms, views[i].Alarm = nil, ""
	}
	for _, a := range c.o.AlarmsFor(names) {
		if i, ok := at[a.Queue]; ok {
			views[i].Alarms = append(views[i].Alarms, a)
		}
	}
	for i := range views {
		alarms.Sort(views[i].Alarms)
		views[i].Alarm = alarmOf(views[i].Alarms)
	}
}

// alarmOf is a queue's alarm summary: FIRING when one of its alarms
// fires, OK when it has alarms and none fires, "" without alarms.
func alarmOf(as []alarms.Alarm) string {
	for _, a := range as {
		if a.State == alarms.StateFiring {
			return string(alarms.StateFiring)
		}
	}
	if len(as) > 0 {
		return string(alarms.StateOK)
	}
	return ""
}

// queueViews turns snapshots into the overview's queues: dead-letter
// queues first (firing ones first among them), then by name.
func (c *Console) queueViews(snaps []tidemq.QueueSnapshot, as []alarms.Alarm) []queueView {
	nameOf := make(map[string]string, len(snaps))
	for _, s := range snaps {
		nameOf[s.ARN] = s.Name
	}
	sources := make(map[string][]string)
	for _, s := range snaps {
		if s.DeadLetterTarget != "" {
			sources[s.DeadLetterTarget] = append(sources[s.DeadLetterTarget], s.Name)
		}
	}
	byQueue := make(map[string][]alarms.Alarm)
	for _, a := range as {
		byQueue[a.Queue] = append(byQueue[a.Queue], a)
	}
	out := make([]queueView, 0, len(snaps))
	for _, s := range snaps {
		v := queueView{
			Name: s.Name, ARN: s.ARN, FIFO: s.FIFO, Visible: s.Visible, InFlight: s.InFlight, Delayed: s.Delayed,
			Depth: s.Visible + s.InFlight + s.Delayed, OldestAgeSeconds: s.OldestAgeSeconds, RetentionSeconds: s.RetentionSeconds,
			DeadLetterQueue: s.IsDeadLetterQueue, MaxReceiveCount: s.MaxReceiveCount, Alarms: byQueue[s.Name],
			Stats: s.Stats,
		}
		if s.DeadLetterTarget != "" {
			v.DeadLetterTarget = nameOf[s.DeadLetterTarget]
			if v.DeadLetterTarget == "" {
				v.DeadLetterTarget = c.queueName(s.DeadLetterTarget)
			}
		}
		v.Sources = sources[s.ARN]
		sort.Strings(v.Sources)
		v.Alarm = alarmOf(v.Alarms)
		out = append(out, v)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.DeadLetterQueue != b.DeadLetterQueue {
			return a.DeadLetterQueue
		}
		if fa, fb := a.Alarm == string(alarms.StateFiring), b.Alarm == string(alarms.StateFiring); fa != fb {
			return fa
		}
		return a.Name < b.Name
	})
	return out
}

// queueName is the broker's name of the queue an ARN names: the plain name
// in the home region, "<region>/<name>" in another (tidemq.RegionalQueueName).
func (c *Console) queueName(arn string) string {
	a, ok := tidemq.ParseARN(arn)
	if !ok {
		return arn[strings.LastIndexByte(arn, ':')+1:]
	}
	return tidemq.RegionalQueueName(a.Region, c.o.Region, a.Resource)
}
