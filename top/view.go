// Package top is `tidemq top`: a live terminal view of every queue (depth,
// in flight, delayed, oldest age, rates, dead-letter depth, alarms),
// refreshed every second, sortable and filterable. The model is separate
// from its data sources: a tidemq server (exact numbers, counters, alarms)
// or any SQS endpoint, AWS included (GetQueueAttributes only).
package top

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/alarms"
)

// Row is one queue as shown.
type Row struct {
	Queue                      string
	Visible, InFlight, Delayed int
	// OldestAge in seconds; negative when unknown.
	OldestAge float64
	// InRate and OutRate are messages per second in and out since the
	// previous frame; negative when unknown.
	InRate, OutRate float64
	// DLQ is the dead-letter queue's name ("" without one), DLQDepth its
	// visible messages (-1 when it is not in the frame).
	DLQ      string
	DLQDepth int
	IsDLQ    bool
	Alarms   []string
}

// Depth is visible + in flight + delayed.
func (r Row) Depth() int { return r.Visible + r.InFlight + r.Delayed }

// Rows builds the rows of cur; prev (may be nil) gives the rates.
func Rows(prev *Frame, cur Frame) []Row {
	byARN := map[string]tidemq.QueueSnapshot{}
	for _, q := range cur.Queues {
		byARN[q.ARN] = q
	}
	var before map[string]tidemq.QueueSnapshot
	dt := 0.0
	if prev != nil && prev.Counters && cur.Counters {
		dt = cur.At.Sub(prev.At).Seconds()
		before = map[string]tidemq.QueueSnapshot{}
		for _, q := range prev.Queues {
			before[q.Name] = q
		}
	}
	firing := map[string][]string{}
	for _, a := range cur.Alarms {
		firing[a.Queue] = append(firing[a.Queue], shortAlarm(a.Alarm))
	}
	rows := make([]Row, 0, len(cur.Queues))
	for _, q := range cur.Queues {
		r := Row{Queue: q.Name, Visible: q.Visible, InFlight: q.InFlight, Delayed: q.Delayed,
			OldestAge: -1, InRate: -1, OutRate: -1, DLQDepth: -1, IsDLQ: q.IsDeadLetterQueue, Alarms: firing[q.Name]}
		if cur.Counters {
			r.OldestAge = q.OldestAgeSeconds
		}
		if q.DeadLetterTarget != "" {
			r.DLQ = q.DeadLetterTarget[strings.LastIndexByte(q.DeadLetterTarget, ':')+1:]
			if d, ok := byARN[q.DeadLetterTarget]; ok {
				r.DLQDepth = d.Visible
			}
		}
		if p, ok := before[q.Name]; ok && dt > 0 {
			in := float64(q.Stats.Sent+q.Stats.MovedIn) - float64(p.Stats.Sent+p.Stats.MovedIn)
			out := float64(outCount(q.Stats)) - float64(outCount(p.Stats))
			if in >= 0 && out >= 0 { // a restart resets the counters: unknown
				r.InRate, r.OutRate = in/dt, out/dt
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// outCount counts every way out of a queue.
func outCount(s tidemq.QueueStats) uint64 {
	return s.Deleted + s.DeadLettered + s.Expired + s.Purged + s.MovedOut
}

func shortAlarm(a string) string {
	switch a {
	case alarms.DLQNotEmpty:
		return "dlq"
	case alarms.OldestAge:
		return "age"
	case alarms.ConsumerGone:
		return "no-consumer"
	case alarms.Growth:
		return "growing"
	case alarms.Expired:
		return "expired"
	case alarms.TriggerErrors:
		return "trigger-errors"
	}
	return a
}

// SortKeys are the orders `s` cycles through.
var SortKeys = []string{"name", "depth", "oldest", "in", "out", "dlq"}

// Sort orders rows by a key: name ascending, the others descending (ties
// by name).
func Sort(rows []Row, key string) {
	val := func(r Row) float64 {
		switch key {
		case "depth":
			return float64(r.Depth())
		case "oldest":
			return r.OldestAge
		case "in":
			return r.InRate
		case "out":
			return r.OutRate
		case "dlq":
			return float64(r.DLQDepth)
		}
		return 0
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if key != "name" {
			if a, b := val(rows[i]), val(rows[j]); a != b {
				return a > b
			}
		}
		return rows[i].Queue < rows[j].Queue
	})
}

// Filter keeps the rows whose queue name contains f (case-insensitive).
func Filter(rows []Row, f string) []Row {
	if f == "" {
		return rows
	}
	f = strings.ToLower(f)
	var out []Row
	for _, r := range rows {
		if strings.Contains(strings.ToLower(r.Queue), f) {
			out = append(out, r)
		}
	}
	return out
}

// View is everything the screen shows.
type View struct {
	Source  string
	At      time.Time
	Rows    []Row // all rows; Render sorts and filters
	Sort    string
	Filter  string
	Editing bool // the filter is being typed
	Err     error
	Width   int // 0: no limit
	// Static is a frame printed once (top --once): no key hints.
	Static bool
}

// Render draws the view as plain text, one line per queue.
func Render(v View) string {
	rows := Filter(append([]Row(nil), v.Rows...), v.Filter)
	Sort(rows, v.Sort)
	var b strings.Builder
	title := fmt.Sprintf("tidemq top — %s — %s — %d queues — sort: %s", v.Source, v.At.Format("15:04:05"), len(rows), v.Sort)
	if v.Filter != "" || v.Editing {
		title += fmt.Sprintf(" — filter: %s", v.Filter)
		if v.Editing {
			title += "▏"
		}
	}
	line(&b, v.Width, title)
	if v.Err != nil {
		line(&b, v.Width, "error: "+v.Err.Error())
	}
	nameW := len("QUEUE")
	for _, r := range rows {
		nameW = max(nameW, len(r.Queue))
	}
	header := fmt.Sprintf("%-*s %8s %8s %9s %8s %8s %8s %8s %6s  %s", nameW, "QUEUE",
		"DEPTH", "VISIBLE", "IN FLIGHT", "DELAYED", "OLDEST", "IN/s", "OUT/s", "DLQ", "ALARMS")
	line(&b, v.Width, header)
	for _, r := range rows {
		dlq := "-"
		switch {
		case r.IsDLQ:
			dlq = "(dlq)"
		case r.DLQ != "" && r.DLQDepth >= 0:
			dlq = fmt.Sprint(r.DLQDepth)
		case r.DLQ != "":
			dlq = "?"
		}
		line(&b, v.Width, strings.TrimRight(fmt.Sprintf("%-*s %8d %8d %9d %8d %8s %8s %8s %6s  %s", nameW, r.Queue,
			r.Depth(), r.Visible, r.InFlight, r.Delayed, age(r.OldestAge), rate(r.InRate), rate(r.OutRate), dlq,
			strings.Join(r.Alarms, ",")), " "))
	}
	if len(rows) == 0 {
		line(&b, v.Width, "(no queues)")
	}
	if v.Static {
		return b.String()
	}
	line(&b, v.Width, "")
	if v.Editing {
		line(&b, v.Width, "type to filter  enter keep  esc clear")
	} else {
		line(&b, v.Width, "q quit  s sort  / filter")
	}
	return b.String()
}

func line(b *strings.Builder, width int, s string) {
	if width > 0 {
		r := []rune(s)
		if len(r) > width {
			s = strings.TrimRight(string(r[:width]), " ")
		}
	}
	b.WriteString(s)
	b.WriteByte('\n')
}

func age(s float64) string {
	if s < 0 {
		return "-"
	}
	d := time.Duration(s) * time.Second
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(s))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(s)%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
}

func rate(r float64) string {
	if r < 0 {
		return "-"
	}
	if r >= 100 {
		return fmt.Sprintf("%.0f", r)
	}
	return fmt.Sprintf("%.1f", r)
}
