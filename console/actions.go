package console

import (
	"net/http"
	"strings"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/dlq"
)

// redriveRequest is the body of POST /console/api/redrive.
type redriveRequest struct {
	Queue string `json:"queue"`
	// Destination "" sends each message back to the queue it was
	// dead-lettered from.
	Destination string `json:"destination,omitempty"`
	// Mark, FinalPass and BodySet are `tidemq dlq redrive`'s --mark,
	// --final-pass and --body-set (one edit an item).
	Mark      bool     `json:"mark,omitempty"`
	FinalPass bool     `json:"finalPass,omitempty"`
	BodySet   []string `json:"bodySet,omitempty"`
}

// redrive redrives a dead-letter queue. A plain redrive of a DLQ that some
// RedrivePolicy names starts a message move task: the broker's redrive
// path, the one StartMessageMoveTask takes, so the task shows in
// ListMessageMoveTasks and can be cancelled like any other; the answer is
// {"taskHandle": H}. A marked redrive (markers or body markers), or one of
// a DLQ that no RedrivePolicy names any more (to a destination the
// operator chooses), is a job that the dlq toolkit runs message by message
// (redrives.go); the answer is {"redrive": ID}.
func (c *Console) redrive(w http.ResponseWriter, r *http.Request) {
	var in redriveRequest
	if err := decode(w, r, &in); err != nil {
		writeError(w, err)
		return
	}
	if err := requireQueue(in.Queue); err != nil {
		writeError(w, err)
		return
	}
	src, err := c.o.Broker.GetQueue(r.Context(), tidemq.GetQueueParams{Name: in.Queue})
	if err != nil {
		writeError(w, err)
		return
	}
	var dst *tidemq.QueueInfo
	if in.Destination != "" {
		if dst, err = c.o.Broker.GetQueue(r.Context(), tidemq.GetQueueParams{Name: in.Destination}); err != nil {
			writeError(w, err)
			return
		}
		if dst.ARN == src.ARN {
			writeError(w, tidemq.Errorf(tidemq.ErrInvalidParameterValue, "The destination is the queue being redriven."))
			return
		}
	}
	o := dlq.RedriveOptions{Mark: in.Mark || in.FinalPass, FinalPass: in.FinalPass}
	var flags []string
	if in.FinalPass {
		flags = append(flags, "--final-pass")
	} else if in.Mark {
		flags = append(flags, "--mark")
	}
	for _, e := range in.BodySet {
		if strings.TrimSpace(e) == "" {
			continue
		}
		edit, err := dlq.ParseBodyEdit(e)
		if err != nil {
			writeError(w, tidemq.Errorf(tidemq.ErrInvalidParameterValue, "%v", err))
			return
		}
		o.BodyEdits = append(o.BodyEdits, edit)
		flags = append(flags, "--body-set "+e)
	}
	snap, _ := c.snapshotOf(src.ARN)
	hasSources := snap.sources > 0
	if !hasSources && !snap.IsDeadLetterQueue {
		writeError(w, tidemq.Errorf(tidemq.ErrInvalidParameterValue,
			"%s is not a dead-letter queue: no RedrivePolicy names it, it holds no dead-lettered messages and it is not named like one; redriving it would take the messages its consumers are waiting for.", in.Queue))
		return
	}
	if !o.Mark && len(o.BodyEdits) == 0 && hasSources {
		p := tidemq.StartMoveTaskParams{SourceARN: src.ARN}
		if dst != nil {
			p.DestinationARN = dst.ARN
		}
		handle, err := c.o.Broker.StartMessageMoveTask(r.Context(), p)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"taskHandle": handle})
		return
	}
	if !hasSources && dst == nil {
		writeError(w, tidemq.Errorf(tidemq.ErrInvalidParameterValue,
			"No RedrivePolicy names %s (was its source queue deleted?), so where its messages came from cannot be told: choose a destination queue.", in.Queue))
		return
	}
	j, err := c.startJob(in.Queue, in.Destination, o, flags)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"redrive": j.id})
}

// dlqSnapshot is a queue's snapshot and how many queues name it in their
// RedrivePolicy.
type dlqSnapshot struct {
	tidemq.QueueSnapshot
	sources int
}

// snapshotOf finds the queue of arn among the broker's queues, and counts
// its sources, in one pass (visit) that copies no other queue's snapshot.
func (c *Console) snapshotOf(arn string) (dlqSnapshot, bool) {
	var out dlqSnapshot
	found := false
	name := c.queueName(arn)
	c.visit(func(s *tidemq.QueueSnapshot) {
		if s.Name == name && (s.ARN == "" || s.ARN == arn) {
			out.QueueSnapshot, found = *s, true
			out.ARN = arn
		}
		if s.DeadLetterTarget == arn {
			out.sources++
		}
	})
	return out, found
}

// purgeRequest is the body of POST /console/api/purge.
type purgeRequest struct {
	Queue string `json:"queue"`
}

func (c *Console) purge(w http.ResponseWriter, r *http.Request) {
	var in purgeRequest
	if err := decode(w, r, &in); err != nil {
		writeError(w, err)
		return
	}
	if err := requireQueue(in.Queue); err != nil {
		writeError(w, err)
		return
	}
	if err := c.o.Broker.PurgeQueue(r.Context(), tidemq.PurgeQueueParams{Queue: in.Queue}); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"purged": in.Queue})
}

// moveTaskView is one message move task.
type moveTaskView struct {
	TaskHandle    string `json:"taskHandle,omitempty"`
	Status        string `json:"status"`
	Source        string `json:"source"`
	Destination   string `json:"destination,omitempty"` // "" = back to the sources
	Moved         int64  `json:"moved"`
	ToMove        int64  `json:"toMove"`
	FailureReason string `json:"failureReason,omitempty"`
	StartedMillis int64  `json:"started"`
	MaxPerSecond  int    `json:"maxPerSecond,omitempty"`
}

// maxMoveTasks is how many recent tasks the console lists.
const maxMoveTasks = 10

func (c *Console) moveTasks(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("queue")
	if err := requireQueue(name); err != nil {
		writeError(w, err)
		return
	}
	q, err := c.o.Broker.GetQueue(r.Context(), tidemq.GetQueueParams{Name: name})
	if err != nil {
		writeError(w, err)
		return
	}
	n := maxMoveTasks
	tasks, err := c.o.Broker.ListMessageMoveTasks(r.Context(), tidemq.ListMoveTasksParams{SourceARN: q.ARN, MaxResults: &n})
	if err != nil {
		writeError(w, err)
		return
	}
	out := make([]moveTaskView, 0, len(tasks))
	for _, t := range tasks {
		v := moveTaskView{TaskHandle: t.TaskHandle, Status: t.Status, Source: c.queueName(t.SourceARN),
			Moved: t.ApproximateNumberOfMessagesMoved, ToMove: t.ApproximateNumberOfMessagesToMove,
			FailureReason: t.FailureReason, StartedMillis: millis(t.StartedTimestamp), MaxPerSecond: t.MaxNumberOfMessagesPerSecond}
		if t.DestinationARN != "" {
			v.Destination = c.queueName(t.DestinationARN)
		}
		out = append(out, v)
	}
	writeJSON(w, http.StatusOK, map[string]any{"queue": name, "tasks": out, "redrives": c.jobs.of(name)})
}
