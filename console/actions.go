package console

import (
	"net/http"

	"github.com/tidemq/tidemq"
)

// redriveRequest is the body of POST /console/api/redrive.
type redriveRequest struct {
	Queue string `json:"queue"`
	// Destination "" sends each message back to the queue it was
	// dead-lettered from.
	Destination string `json:"destination,omitempty"`
}

// redrive starts a message move task out of a dead-letter queue: the
// broker's redrive path, the one StartMessageMoveTask takes, so the task
// shows in ListMessageMoveTasks and can be cancelled like any other.
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
	p := tidemq.StartMoveTaskParams{SourceARN: src.ARN}
	if in.Destination != "" {
		dst, err := c.o.Broker.GetQueue(r.Context(), tidemq.GetQueueParams{Name: in.Destination})
		if err != nil {
			writeError(w, err)
			return
		}
		p.DestinationARN = dst.ARN
	}
	handle, err := c.o.Broker.StartMessageMoveTask(r.Context(), p)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"taskHandle": handle})
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
	writeJSON(w, http.StatusOK, map[string]any{"queue": name, "tasks": out})
}
