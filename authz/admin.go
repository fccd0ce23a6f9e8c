package authz

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/api/sigv4"
	"github.com/tidemq/tidemq/audit"
)

// tidemq's own actions, checked on the admin routes (frontdoor's Admin
// routes: the admin API, the console's API, the probes under --auth):
//
//	tidemq:GetHealth, tidemq:GetMetrics      GET /health, GET /metrics (unless --auth-exempt)
//	(nothing)                                GET /tidemq/queues and the console's overview: each lists
//	                                         only the queues whose attributes the caller may read
//	                                         (sqs:GetQueueAttributes on the queue); the console's topics
//	                                         only those it may sns:ListSubscriptionsByTopic on
//	tidemq:GetAlarms                         GET /tidemq/alarms
//	tidemq:ListTriggers                      GET /tidemq/triggers
//	tidemq:GetTrigger, tidemq:CreateTrigger, tidemq:UpdateTrigger, tidemq:DeleteTrigger
//	                                         on arn:aws:tidemq:<region>:<account>:trigger/<name>; creating,
//	                                         changing or deleting a trigger also needs sqs:ReceiveMessage and
//	                                         sqs:DeleteMessage on its queue: the trigger consumes it
//	tidemq:RunCommand                        creating or changing a trigger whose target is a command or
//	                                         a function (a program run as the server's user), besides
//	                                         the trigger's own action
//	tidemq:Backup                            POST /tidemq/backup
//	tidemq:PeekMessages                      the console's messages (and the PeekMessages extension)
//	tidemq:Redrive                           the console's redrive, on the dead-letter queue (and
//	                                         sqs:SendMessage on the destination it names, or else
//	                                         on each source queue of the dead-letter queue)
//	sqs:PurgeQueue, sqs:ListMessageMoveTasks the console's purge and move-task list, on the queue
//	tidemq:Admin                             any admin route not listed here
//
// Server-wide actions are on the resource arn:aws:tidemq:<region>:<account>:server.

// AdminOptions are what the admin guard needs besides the Authorizer.
type AdminOptions struct {
	// TriggerQueue returns the queue (broker name) of a trigger by name.
	TriggerQueue func(name string) (queue string, ok bool)
	// DeadLetterSources returns the queues (broker names) whose dead-letter
	// queue is queue: a redrive without a destination sends into each.
	// A queue that does not exist has none (tidemq.ErrQueueDoesNotExist).
	DeadLetterSources func(ctx context.Context, queue string) ([]string, error)
	// Paths: where the routes are mounted (trigger.APIPath, console.APIPath,
	// backup.APIPath...), so that this package depends on none of them.
	TriggersPath, ConsoleAPIPath, BackupPath, QueuesPath, AlarmsPath string
}

// check is one permission an admin request needs.
type check struct{ action, resource string }

// Guard is frontdoor.Config.Guard: it decides an admin request and, for
// one that changes state, writes its outcome to the audit log.
func (a *Authorizer) Guard(o AdminOptions) func(r *http.Request, accessKey string) (func(int), error) {
	return func(r *http.Request, key string) (func(int), error) {
		checks, err := a.adminChecks(o, r)
		if err != nil {
			return nil, err
		}
		if len(checks) == 0 && r.Method != http.MethodGet && r.Method != http.MethodHead {
			checks = []check{{"tidemq:Admin", a.serverARN()}}
		}
		for _, c := range checks {
			if err := a.Check(r.Context(), CallOf(r, key, c.action, c.resource)); err != nil {
				return nil, err
			}
		}
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			return nil, nil
		}
		who := key
		if p, ok := a.Store.Directory().Principal(key); ok {
			who = p.ARN()
		}
		return func(status int) {
			a.Audit.Write(audit.Event{Kind: audit.KindChange, Principal: who, AccessKey: key, Action: checks[0].action,
				Resource: checks[0].resource, Source: r.RemoteAddr, Method: r.Method, Path: r.URL.Path, Status: status})
		}, nil
	}
}

func (a *Authorizer) serverARN() string {
	return "arn:aws:tidemq:" + a.Region + ":" + a.Account + ":server"
}

func (a *Authorizer) queueARN(name string) string {
	return tidemq.RegionalQueueARN(a.Region, a.Account, name)
}

func (a *Authorizer) triggerARN(name string) string {
	return "arn:aws:tidemq:" + a.Region + ":" + a.Account + ":trigger/" + name
}

// adminChecks maps an admin request to the permissions it needs
// (tidemq:Admin for a route it does not know; none for the console's
// overview, which filters what it shows). A body the checks are read from
// that is not exactly one JSON value is refused here: what the guard did
// not read could not have been checked.
func (a *Authorizer) adminChecks(o AdminOptions, r *http.Request) ([]check, error) {
	server := a.serverARN()
	path, get := r.URL.Path, r.Method == http.MethodGet || r.Method == http.MethodHead
	switch {
	case path == "/health" && get:
		return []check{{"tidemq:GetHealth", server}}, nil
	case path == "/metrics" && get:
		return []check{{"tidemq:GetMetrics", server}}, nil
	case path == o.QueuesPath && get:
		return nil, nil // every signed-in principal; it lists only the queues it may see
	case path == o.AlarmsPath && get:
		return []check{{"tidemq:GetAlarms", server}}, nil
	case path == o.BackupPath:
		return []check{{"tidemq:Backup", server}}, nil
	case o.TriggersPath != "" && (path == o.TriggersPath || strings.HasPrefix(path, o.TriggersPath+"/")):
		return a.triggerChecks(o, r)
	case o.ConsoleAPIPath != "" && strings.HasPrefix(path, o.ConsoleAPIPath+"/"):
		return a.consoleChecks(o, r, strings.TrimPrefix(path, o.ConsoleAPIPath+"/"))
	}
	return []check{{"tidemq:Admin", server}}, nil
}

// requestQueue is the broker name of the queue a trigger body names, as the
// trigger API resolves it (trigger.Manager.requestQueue): a plain name is
// in the region the request is signed for, "<region>/<name>" as it says.
func (a *Authorizer) requestQueue(r *http.Request, queue string) string {
	if queue == "" {
		return ""
	}
	if !strings.Contains(queue, "/") {
		queue = tidemq.RegionalQueueName(sigv4.ScopeRegion(r), a.Region, queue)
	}
	return tidemq.CanonicalQueueName(queue, a.Region)
}

func (a *Authorizer) triggerChecks(o AdminOptions, r *http.Request) ([]check, error) {
	rest := strings.Trim(strings.TrimPrefix(r.URL.Path, o.TriggersPath), "/")
	name, _, _ := strings.Cut(rest, "/")
	consume := func(queue string) []check {
		q := a.queueARN(queue)
		return []check{{"sqs:ReceiveMessage", q}, {"sqs:DeleteMessage", q}}
	}
	var body struct {
		Name, Queue string
		Target      struct {
			Command  []string
			Function json.RawMessage
		}
	}
	if err := readJSON(r, &body); err != nil {
		return nil, err
	}
	// A command or a function target runs a program as the server's
	// user: that is more than consuming a queue, and asked for apart.
	runs := len(body.Target.Command) > 0 || len(body.Target.Function) > 0 && string(body.Target.Function) != "null"
	withRun := func(checks []check) []check {
		if runs {
			checks = append(checks, check{"tidemq:RunCommand", a.serverARN()})
		}
		return checks
	}
	switch {
	case name == "" && r.Method == http.MethodGet:
		return []check{{"tidemq:ListTriggers", a.serverARN()}}, nil
	case name == "" && r.Method == http.MethodPost:
		return withRun(append([]check{{"tidemq:CreateTrigger", a.triggerARN(body.Name)}}, consume(a.requestQueue(r, body.Queue))...)), nil
	case r.Method == http.MethodGet:
		return []check{{"tidemq:GetTrigger", a.triggerARN(name)}}, nil
	}
	action := "tidemq:UpdateTrigger"
	if r.Method == http.MethodDelete {
		action = "tidemq:DeleteTrigger"
	}
	checks := []check{{action, a.triggerARN(name)}}
	if o.TriggerQueue != nil {
		if q, ok := o.TriggerQueue(name); ok {
			checks = append(checks, consume(q)...)
		}
	}
	if body.Queue != "" { // moved to another queue: it must be the caller's to consume too
		checks = append(checks, consume(a.requestQueue(r, body.Queue))...)
	}
	return withRun(checks), nil
}

func (a *Authorizer) consoleChecks(o AdminOptions, r *http.Request, route string) ([]check, error) {
	var body struct {
		Queue       string `json:"queue"`
		Destination string `json:"destination"`
	}
	if r.Method == http.MethodPost {
		if err := readJSON(r, &body); err != nil {
			return nil, err
		}
	} else {
		body.Queue = r.URL.Query().Get("queue")
	}
	q := a.queueARN(body.Queue)
	switch route {
	case "overview":
		return nil, nil // every signed-in principal; the console lists only the queues it may see
	case "topics":
		return nil, nil // likewise: the topics it may list the subscriptions of
	case "messages":
		return []check{{"tidemq:PeekMessages", q}}, nil
	case "movetasks":
		return []check{{"sqs:ListMessageMoveTasks", q}}, nil
	case "purge":
		return []check{{"sqs:PurgeQueue", q}}, nil
	case "redrive":
		checks := []check{{"tidemq:Redrive", q}}
		if body.Destination != "" {
			return append(checks, check{"sqs:SendMessage", a.queueARN(body.Destination)}), nil
		}
		// Back to the sources: the messages are sent into each of them.
		if o.DeadLetterSources != nil && body.Queue != "" {
			sources, err := o.DeadLetterSources(r.Context(), body.Queue)
			if err != nil && !tidemq.HasCode(err, tidemq.ErrQueueDoesNotExist) {
				return nil, err
			}
			for _, s := range sources {
				checks = append(checks, check{"sqs:SendMessage", a.queueARN(s)})
			}
		}
		return checks, nil
	}
	return []check{{"tidemq:Admin", a.serverARN()}}, nil
}

// readJSON decodes a request's JSON body into v, leaving the body to be
// read again. An empty body leaves v empty; any other body must be exactly
// one JSON value that decodes into v (nothing after it but white space),
// else MalformedInput: a body the guard reads otherwise than the handler
// would let a request be checked against names it does not use.
func readJSON(r *http.Request, v any) error {
	if r.Body == nil {
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	r.Body = io.NopCloser(bytes.NewReader(data))
	if err != nil {
		return tidemq.Errorf(tidemq.ErrMalformedInput, "The request body could not be read: %v", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return tidemq.Errorf(tidemq.ErrMalformedInput, "The request body is not one JSON object of the expected shape: %v", err)
	}
	return nil
}
