package console

import (
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/alarms"
	"github.com/tidemq/tidemq/api/adminjson"
	"github.com/tidemq/tidemq/sns"
)

// Paths the console is served at. Register Assets at "GET "+Path+"/" as a
// public route and API at APIPath+"/" as an admin route.
const (
	Path    = "/console"
	APIPath = "/console/api"
)

// Topics is what the console reads of the SNS topic service.
type Topics interface {
	ListTopics(ctx context.Context) []*sns.Topic
	ListSubscriptions(ctx context.Context, p sns.ListSubscriptionsParams) ([]*sns.Subscription, error)
}

// Options configure a Console.
type Options struct {
	// Broker is read (Snapshot, PeekMessages, ListMessageMoveTasks) and
	// acted on (StartMessageMoveTask, PurgeQueue). Required.
	Broker tidemq.Broker
	// Visit, when set, hands every queue's snapshot to f, one at a time,
	// and reports false when the broker cannot be read (engine.Engine's
	// Visit): the overview then keeps copies of the queues it lists only.
	// nil: Broker's own Visit, when it has one, else Broker.Snapshot.
	Visit func(f func(*tidemq.QueueSnapshot)) bool
	// Alarms returns the evaluated alarms; nil when alarms are off.
	Alarms func() []alarms.Alarm
	// AlarmsFor, if set, returns every firing alarm and those of the named
	// queues (alarms.Evaluator.Shown); the overview then asks for the
	// alarms of the queues it lists only, instead of every alarm.
	AlarmsFor func(queues []string) []alarms.Alarm
	// Topics is the SNS topic service; nil shows no topics.
	Topics Topics
	// Region and AccountID are shown in the page header.
	Region, AccountID string
	// Clock tells the time of an overview; nil means the system clock.
	Clock tidemq.Clock
	// SQS is this server's SQS protocol handler without an authenticator
	// (the console API is the admin check): the redrives that a message
	// move task cannot do (marked ones, or of a DLQ no RedrivePolicy names)
	// run `tidemq dlq redrive`'s code against it in-process. nil: those
	// redrives are refused.
	SQS http.Handler
	// Visible, when set (--auth with permissions), says whether the
	// signed-in caller of r may see a queue (by ARN): the overview lists
	// only those. nil shows every queue.
	Visible func(r *http.Request, queueARN string) bool
	// VisibleTopic, likewise, says whether the caller may see a topic
	// and its subscriptions (by ARN): the topics page lists only those.
	// nil shows every topic.
	VisibleTopic func(r *http.Request, topicARN string) bool
}

// Console serves the web console.
type Console struct {
	o    Options
	jobs jobs
	// ctx is the redrive jobs' context, cancelled by Close.
	ctx    context.Context
	cancel context.CancelFunc
}

// New returns a Console.
func New(o Options) *Console {
	if o.Clock == nil {
		o.Clock = tidemq.SystemClock{}
	}
	if v, ok := o.Broker.(tidemq.Visitor); ok && o.Visit == nil {
		o.Visit = v.Visit
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Console{o: o, ctx: ctx, cancel: cancel}
}

// Close stops the redrive jobs still running and waits for them: each
// ends between two messages, handing back the ones it held (as
// `tidemq dlq redrive` does on Ctrl-C). The broker must still be open.
func (c *Console) Close() error {
	c.cancel()
	c.Wait()
	return nil
}

// API returns the handler of the console's JSON API, under APIPath:
//
//	GET  /console/api/overview                    QueueSnapshots (dead-letter queues first) and their alarms
//	GET  /console/api/messages?queue=Q&max=N&inflight=1   peek, nothing about the messages changes
//	GET  /console/api/movetasks?queue=Q           the queue's recent move tasks and redrive jobs
//	POST /console/api/redrive {"queue":Q,"destination":D,"mark":B,"finalPass":B,"bodySet":[E]}
//	                                              a move task (D "" = back to sources), or a
//	                                              job run message by message (redrives.go)
//	POST /console/api/purge   {"queue":Q}         purge
//	GET  /console/api/topics                      topics and their subscriptions
//
// Errors are {"error": message, "code": code} with the catalogue's status,
// as on tidemq's other admin endpoints.
func (c *Console) API() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+APIPath+"/overview", c.overview)
	mux.HandleFunc("GET "+APIPath+"/messages", c.messages)
	mux.HandleFunc("GET "+APIPath+"/movetasks", c.moveTasks)
	mux.HandleFunc("POST "+APIPath+"/redrive", c.redrive)
	mux.HandleFunc("POST "+APIPath+"/purge", c.purge)
	mux.HandleFunc("GET "+APIPath+"/topics", c.topics)
	mux.HandleFunc(APIPath+"/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, tidemq.Errorf(tidemq.ErrAdminNotFound, "The console has no %s %s.", r.Method, r.URL.Path))
	})
	return mux
}

// maxBody bounds a console POST body: a queue name or two.
const maxBody = 64 << 10

// decode reads a JSON request body into v, refusing unknown fields.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return tidemq.Errorf(tidemq.ErrMalformedInput, "The request body is not what the console sends: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return tidemq.Errorf(tidemq.ErrMalformedInput, "The request body has more than one JSON value.")
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers as every admin route does (api/adminjson).
func writeError(w http.ResponseWriter, err error) { adminjson.WriteError(w, err) }
