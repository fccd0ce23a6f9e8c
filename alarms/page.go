package alarms

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strings"
)

// PageSize and MaxPageSize are the default and largest page of GET
// /tidemq/alarms: at 100,000 queues a server evaluates some 400,000
// alarms, which in one answer took some 100 MB to build.
const (
	PageSize    = 1000
	MaxPageSize = 10000
)

// errToken is a nextToken that does not decode.
var errToken = errors.New("invalid nextToken")

// alarmKey is an alarm's place in Sort's order, and what a page token
// holds: the last alarm of the previous page.
type alarmKey struct {
	Firing  bool   `json:"f,omitempty"`
	Queue   string `json:"q,omitempty"`
	Alarm   int    `json:"a"`
	Trigger string `json:"t,omitempty"`
}

var nameOrder = func() map[string]int {
	m := make(map[string]int, len(Names))
	for i, n := range Names {
		m[n] = i
	}
	return m
}()

func keyOf(a *Alarm) alarmKey {
	return alarmKey{Firing: a.State == StateFiring, Queue: a.Queue, Alarm: nameOrder[a.Alarm], Trigger: a.Trigger}
}

// before reports whether k comes before o in Sort's order.
func (k alarmKey) before(o alarmKey) bool {
	if k.Firing != o.Firing {
		return k.Firing
	}
	if k.Queue != o.Queue {
		return k.Queue < o.Queue
	}
	if k.Alarm != o.Alarm {
		return k.Alarm < o.Alarm
	}
	return k.Trigger < o.Trigger
}

func (k alarmKey) token() string {
	b, _ := json.Marshal(k)
	return base64.RawURLEncoding.EncodeToString(b)
}

func parseToken(s string) (*alarmKey, error) {
	if s == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	var k alarmKey
	if err != nil || json.Unmarshal(b, &k) != nil {
		return nil, errToken
	}
	return &k, nil
}

// Page returns, in Sort's order, at most limit alarms that follow the
// alarm named by token ("": from the first), and the token of the next
// page ("" after the last). It makes only the alarms of the page: the
// firing ones are indexed by each evaluation, and the others are read
// queue by queue, in name order, from the token's queue on. An alarm whose
// state changes between two pages' requests moves in the order: it may
// be missed or listed twice.
func (e *Evaluator) Page(limit int, token string) ([]Alarm, string, error) {
	after, err := parseToken(token)
	if err != nil {
		return nil, "", err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	x := &e.shown
	out := make([]Alarm, 0, min(limit, 64))
	more := false
	add := func(a Alarm) bool {
		if after != nil && !after.before(keyOf(&a)) {
			return true
		}
		if len(out) == limit {
			more = true
			return false
		}
		out = append(out, a)
		return true
	}
	for _, a := range x.firingSorted() {
		if !add(a) {
			break
		}
	}
	if !more {
		order := e.pageOrder()
		i := 0
		if after != nil && !after.Firing {
			i = sort.SearchStrings(order, after.Queue)
		}
	queues:
		for _, q := range order[i:] {
			if qs := e.queues[q]; qs != nil {
				for j := range queueAlarms {
					if qs.on(j) && !qs.firing(j) && !add(e.queueAlarm(q, qs, j)) {
						break queues
					}
				}
			}
			for _, a := range x.byQueue[q] {
				if a.State != StateFiring && !add(a) {
					break queues
				}
			}
		}
	}
	if !more {
		return out, "", nil
	}
	k := keyOf(&out[len(out)-1])
	return out, k.token(), nil
}

// firingSorted returns the firing alarms in Sort's order, sorting them
// once per evaluation.
func (x *shownIndex) firingSorted() []Alarm {
	if !x.firingInOrder {
		Sort(x.firing)
		x.firingInOrder = true
	}
	return x.firing
}

// pageOrder returns the names of the queues with alarms (and "" for the
// server's own), sorted: made once per evaluation, when a page is first
// asked for. Called with e.mu held.
func (e *Evaluator) pageOrder() []string {
	x := &e.shown
	if x.order != nil {
		return x.order
	}
	order := make([]string, 0, len(e.queues)+len(x.byQueue))
	for q := range e.queues {
		order = append(order, q)
	}
	for q, as := range x.byQueue {
		if _, ok := e.queues[q]; !ok {
			order = append(order, q)
		}
		slices.SortFunc(as, func(a, b Alarm) int {
			if d := nameOrder[a.Alarm] - nameOrder[b.Alarm]; d != 0 {
				return d
			}
			return strings.Compare(a.Trigger, b.Trigger)
		})
	}
	sort.Strings(order)
	x.order = order
	return order
}
