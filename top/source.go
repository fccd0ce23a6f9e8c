package top

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/adminclient"
	"github.com/tidemq/tidemq/alarms"
)

// Frame is what a source reports at one moment.
type Frame struct {
	At     time.Time
	Queues []tidemq.QueueSnapshot
	// Counters is true when Queues carry counters (Stats) and ages: rates
	// and the oldest age can be shown.
	Counters bool
	// Alarms are the firing alarms, when the source knows them.
	Alarms []alarms.Alarm
}

// Source reads frames.
type Source interface {
	// Name describes the source in the title line.
	Name() string
	Fetch(ctx context.Context) (Frame, error)
}

// TidemqSource reads a tidemq server's GET /tidemq/queues and
// GET /tidemq/alarms (through adminclient): exact depths, ages, counters
// and alarms.
type TidemqSource struct {
	Endpoint string
	Client   *http.Client
	Now      func() time.Time
}

// Name is the endpoint.
func (s *TidemqSource) Name() string { return "tidemq " + s.Endpoint }

func (s *TidemqSource) admin() *adminclient.Client { return adminclient.New(s.Endpoint, s.Client) }

// Fetch reads the queues and the firing alarms.
func (s *TidemqSource) Fetch(ctx context.Context) (Frame, error) {
	queues, err := s.admin().Queues(ctx)
	if err != nil {
		return Frame{}, notTidemq(err)
	}
	f := Frame{At: s.now(), Queues: queues, Counters: true}
	if l, err := s.admin().FiringAlarms(ctx); err == nil {
		f.Alarms = l.Alarms
	}
	return f, nil
}

func (s *TidemqSource) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// errNotTidemq is returned when the endpoint does not serve /tidemq/queues.
var errNotTidemq = errors.New("not a tidemq server")

// notTidemq marks an answer outside 2xx as errNotTidemq.
func notTidemq(err error) error {
	var e *adminclient.Error
	if errors.As(err, &e) {
		return fmt.Errorf("%s %s: %d %s: %w", e.Method, e.URL, e.Status, http.StatusText(e.Status), errNotTidemq)
	}
	return err
}

// Probe reports whether the endpoint is a tidemq server with
// GET /tidemq/queues.
func (s *TidemqSource) Probe(ctx context.Context) bool {
	var q struct{ Queues []tidemq.QueueSnapshot }
	return s.admin().Do(ctx, http.MethodGet, "/tidemq/queues", nil, &q) == nil
}

// SQSAPI is the part of the SQS client the SQS source uses.
type SQSAPI interface {
	ListQueues(ctx context.Context, in *sqs.ListQueuesInput, opts ...func(*sqs.Options)) (*sqs.ListQueuesOutput, error)
	GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, opts ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
}

// SQSSource reads any SQS endpoint (AWS itself included) with ListQueues
// and GetQueueAttributes: depths and dead-letter links, but no counters,
// ages or alarms (those live in CloudWatch).
type SQSSource struct {
	Client SQSAPI
	Label  string
	Now    func() time.Time
	// Concurrency bounds the GetQueueAttributes calls in flight (default 8).
	Concurrency int
}

// Name is the label.
func (s *SQSSource) Name() string { return "sqs " + s.Label }

// Fetch lists every queue and reads its attributes.
func (s *SQSSource) Fetch(ctx context.Context) (Frame, error) {
	var urls []string
	in := &sqs.ListQueuesInput{MaxResults: ptr(int32(1000))}
	for {
		out, err := s.Client.ListQueues(ctx, in)
		if err != nil {
			return Frame{}, err
		}
		urls = append(urls, out.QueueUrls...)
		if out.NextToken == nil || *out.NextToken == "" {
			break
		}
		in.NextToken = out.NextToken
	}
	qs := make([]tidemq.QueueSnapshot, len(urls))
	errs := make([]error, len(urls))
	n := s.Concurrency
	if n <= 0 {
		n = 8
	}
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out, err := s.Client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &u,
				AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
			if err != nil {
				errs[i] = err
				return
			}
			qs[i] = tidemq.SnapshotOfAttributes(u, out.Attributes)
		}()
	}
	wg.Wait()
	var kept []tidemq.QueueSnapshot
	for i, q := range qs {
		if errs[i] == nil { // a queue deleted between the calls drops out
			kept = append(kept, q)
		}
	}
	dlqs := map[string]bool{}
	for _, q := range kept {
		if q.DeadLetterTarget != "" {
			dlqs[q.DeadLetterTarget] = true
		}
	}
	// SQS's own definition (a RedrivePolicy names it), or named like one,
	// so that a dead-letter queue whose source was deleted stays marked,
	// as it does against tidemq (tidemq.NamedLikeDeadLetterQueue).
	for i := range kept {
		kept[i].IsDeadLetterQueue = dlqs[kept[i].ARN] || tidemq.NamedLikeDeadLetterQueue(kept[i].Name)
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].Name < kept[j].Name })
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	return Frame{At: now(), Queues: kept}, nil
}

func ptr[T any](v T) *T { return &v }
