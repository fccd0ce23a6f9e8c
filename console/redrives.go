package console

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/dlq"
)

// A redrive that a message move task cannot do runs as a job: `tidemq dlq
// redrive`'s own code (dlq.Client.Redrive) against this server, through an
// in-process SQS client (loopback.go). That is:
//
//   - a marked redrive: the markers as message attributes (mark, finalPass)
//     and the body markers (bodySet, --body-set), byte for byte what the
//     CLI writes, since it is the CLI's code;
//   - a redrive of a dead-letter queue that no RedrivePolicy names any more
//     (its source queue was deleted or now uses another DLQ), to a queue
//     the operator chooses: StartMessageMoveTask refuses such a queue.
//
// A job is bounded like the CLI's pass (what the DLQ held when it started;
// a message moved in the pass is not moved again) and ends with the same
// summary: moved, not redriven (with the reason, per message), came back.
// Jobs live in the console's memory only: the last maxJobs are listed.

// maxJobs is how many redrive jobs the console remembers.
const maxJobs = 20

// Job states, as move tasks name theirs.
const (
	jobRunning   = tidemq.MoveTaskRunning
	jobCompleted = tidemq.MoveTaskCompleted
	jobFailed    = tidemq.MoveTaskFailed
)

// redriveJob is one redrive the console runs message by message.
type redriveJob struct {
	id          string
	queue       string
	destination string // "" = back to each message's source
	opts        string // the options, as the CLI's flags
	started     time.Time

	mu       sync.Mutex
	status   string
	out      bytes.Buffer // what the CLI would print
	res      *dlq.RedriveResult
	err      error
	finished time.Time
}

// Write collects the redrive's output (dlq.Client.Out and Err).
func (j *redriveJob) Write(p []byte) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.out.Write(p)
}

// jobView is a redrive job as the API shows it.
type jobView struct {
	ID          string            `json:"id"`
	Status      string            `json:"status"`
	Source      string            `json:"source"`
	Destination string            `json:"destination,omitempty"`
	Options     string            `json:"options,omitempty"`
	Started     int64             `json:"started"`
	Finished    int64             `json:"finished,omitempty"`
	Moved       int               `json:"moved"`
	NotRedriven []dlq.NotRedriven `json:"notRedriven,omitempty"`
	CameBack    []dlq.CameBack    `json:"cameBack,omitempty"`
	Error       string            `json:"error,omitempty"`
	// Output is what `tidemq dlq redrive` would have printed so far.
	Output string `json:"output"`
}

func (j *redriveJob) view() jobView {
	j.mu.Lock()
	defer j.mu.Unlock()
	v := jobView{ID: j.id, Status: j.status, Source: j.queue, Destination: j.destination, Options: j.opts,
		Started: millis(j.started), Finished: millis(j.finished), Output: j.out.String()}
	if j.res != nil {
		v.Moved, v.NotRedriven, v.CameBack = j.res.Moved, j.res.NotRedriven, j.res.CameBack
	}
	if j.err != nil {
		v.Error = j.err.Error()
	}
	return v
}

// jobs are the console's redrive jobs, newest last.
type jobs struct {
	mu   sync.Mutex
	next int
	list []*redriveJob
	wg   sync.WaitGroup
}

// running reports whether a job of queue runs.
func (js *jobs) running(queue string) bool {
	js.mu.Lock()
	defer js.mu.Unlock()
	for _, j := range js.list {
		j.mu.Lock()
		busy := j.queue == queue && j.status == jobRunning
		j.mu.Unlock()
		if busy {
			return true
		}
	}
	return false
}

func (js *jobs) add(j *redriveJob) {
	js.mu.Lock()
	defer js.mu.Unlock()
	js.next++
	j.id = "redrive-" + strconv.Itoa(js.next)
	js.list = append(js.list, j)
	if len(js.list) > maxJobs {
		js.list = js.list[len(js.list)-maxJobs:]
	}
}

// of lists queue's jobs, newest first.
func (js *jobs) of(queue string) []jobView {
	js.mu.Lock()
	list := append([]*redriveJob(nil), js.list...)
	js.mu.Unlock()
	out := []jobView{}
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].queue == queue {
			out = append(out, list[i].view())
		}
	}
	return out
}

// startJob starts a redrive of queue run by the dlq toolkit.
func (c *Console) startJob(queue, destination string, o dlq.RedriveOptions, flags []string) (*redriveJob, error) {
	if c.o.SQS == nil {
		return nil, tidemq.Errorf(tidemq.ErrInvalidParameterValue, "This console cannot redrive message by message (it has no SQS handler): use tidemq dlq redrive.")
	}
	region, name := c.regionOf(queue)
	if destination != "" {
		dregion, dname := c.regionOf(destination)
		if dregion != region {
			return nil, tidemq.Errorf(tidemq.ErrInvalidParameterValue, "%s and %s are in different regions: a redrive stays in one region.", queue, destination)
		}
		o.To = dname
	}
	if c.jobs.running(queue) {
		return nil, tidemq.Errorf(tidemq.ErrInvalidParameterValue, "A redrive of %s is already running.", queue)
	}
	j := &redriveJob{queue: queue, destination: destination, opts: strings.Join(flags, " "), started: c.o.Clock.Now(), status: jobRunning}
	c.jobs.add(j)
	client := &dlq.Client{SQS: c.sqsClient(region), Out: j, Err: j, Mode: dlq.ModeTidemq}
	c.jobs.wg.Add(1)
	go func() {
		defer c.jobs.wg.Done()
		res, err := client.Redrive(c.ctx, name, o)
		j.mu.Lock()
		defer j.mu.Unlock()
		j.res, j.err, j.finished = res, err, c.o.Clock.Now()
		j.status = jobCompleted
		if err != nil {
			j.status = jobFailed
		}
		if res == nil && err == nil {
			j.err = errors.New("the redrive ended without a result")
			j.status = jobFailed
		}
	}()
	return j, nil
}

// Wait waits until the redrive jobs running now have ended (tests, and a
// server shutting down).
func (c *Console) Wait() { c.jobs.wg.Wait() }
