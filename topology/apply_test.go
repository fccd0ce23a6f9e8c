package topology

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/alarms"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/sns"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/trigger"
)

// server is what 'tidemq serve --config' applies a topology to, in
// process: the engine, the topic store, the trigger manager and the alarm
// evaluator.
type server struct {
	eng      *engine.Engine
	topics   *sns.Service
	triggers *trigger.Manager
	alarms   *alarms.Evaluator
}

func newServer(t *testing.T) *server {
	t.Helper()
	eng, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	topics, err := sns.Open(sns.Options{Broker: eng})
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := any(topics).(io.Closer); ok {
		t.Cleanup(func() { c.Close() })
	}
	m, err := trigger.NewManager(trigger.Options{Broker: eng, WaitTimeSeconds: -1, AllowCommands: true})
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		m.Close(ctx)
	})
	ev := alarms.New(alarms.Options{Snapshots: eng.Snapshot})
	return &server{eng: eng, topics: topics, triggers: m, alarms: ev}
}

func (s *server) targets() Targets {
	return Targets{Queues: BrokerTarget{s.eng}, Topics: SNSTarget{s.topics}, Triggers: ManagerTarget{s.triggers}, Alarms: s.alarms}
}

// loadFull reads testdata/apply-full.yaml with its function URL.
func loadFull(t *testing.T, url string) *Config {
	t.Helper()
	data, err := os.ReadFile("testdata/apply-full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse([]byte(strings.ReplaceAll(string(data), "FUNCTION_URL", url)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func planText(p *Plan) string {
	var b strings.Builder
	p.Print(&b)
	return b.String()
}

// TestApplyAllInProcess applies queues, topics, subscriptions, triggers
// and alarms to a server in process; checks what was made, that a second
// apply changes nothing, that drift is planned and put back, and that the
// trigger it made delivers.
func TestApplyAllInProcess(t *testing.T) {
	ctx := context.Background()
	events := make(chan map[string]any, 10)
	fn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev map[string]any
		_ = json.NewDecoder(r.Body).Decode(&ev)
		ev["auth"] = r.Header.Get("Authorization")
		events <- ev
		w.Write([]byte(`{"batchItemFailures":[]}`))
	}))
	defer fn.Close()
	s := newServer(t)
	c := loadFull(t, fn.URL)

	plan, err := ApplyAll(ctx, s.targets(), c, false)
	if err != nil {
		t.Fatalf("%v\n%s", err, planText(plan))
	}
	text := planText(plan)
	for _, want := range []string{
		"+ queue orders (create)\n    DelaySeconds = 0\n",
		"+ topic events (create)\n    DisplayName = Order events\n    tag team = shop\n",
		"+ subscription events -> sqs:orders (create)\n    FilterPolicy = {\"type\":[\"order\"]}\n    FilterPolicyScope = MessageAttributes\n    RawMessageDelivery = true\n    RedrivePolicy = {\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:orders-dlq\"}\n",
		"+ subscription events -> sqs:reports (create)\n",
		"! subscription events -> email:ops@example.com (not applied: protocol email: only sqs, http and https subscriptions are applied)\n",
		"+ topic audit.fifo (create)\n    FifoTopic = true\n    ContentBasedDeduplication = true\n",
		"+ trigger order-worker.orders (create)\n",
		"    MaximumConcurrency = 3\n",
		"    note: concurrency capped at 3 by the function's reserved concurrency 3\n",
		"+ trigger auditor.audit.fifo (create)\n",
		"! trigger reporter.reports (not applied: function reporter has no url or command to stand for it locally)\n",
		"= alarm orders-dlq-depth (unchanged)\n    note: dlq_not_empty on orders-dlq\n",
		"~ alarm orders-age (update)\n    orders oldest_age_share: 0.5 -> 0.25\n",
		"! alarm orders-backlog (not applied: orders is not a dead-letter queue",
		"! alarm orders-sent (not applied: no built-in alarm watches NumberOfMessagesSent)\n",
		"12 to create, 1 to update, 1 unchanged, 4 not applied\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("plan lacks %q:\n%s", want, text)
		}
	}

	// Topics and subscriptions, as the topic store has them.
	events0 := s.topics.TopicARN("events")
	a, err := s.topics.GetTopicAttributes(context.Background(), sns.GetTopicAttributesParams{TopicARN: events0})
	if err != nil || a["DisplayName"] != "Order events" {
		t.Fatalf("events: %v %v", a, err)
	}
	if a, _ := s.topics.GetTopicAttributes(context.Background(), sns.GetTopicAttributesParams{TopicARN: s.topics.TopicARN("audit.fifo")}); a["FifoTopic"] != "true" || a["ContentBasedDeduplication"] != "true" {
		t.Errorf("audit.fifo: %v", a)
	}
	subs, _ := s.topics.ListSubscriptions(context.Background(), sns.ListSubscriptionsParams{TopicARN: events0})
	if len(subs) != 2 {
		t.Fatalf("subscriptions: %+v", subs)
	}
	byQueue := map[string]*sns.Subscription{}
	for _, sub := range subs {
		byQueue[sub.Endpoint[strings.LastIndexByte(sub.Endpoint, ':')+1:]] = sub
	}
	if o := byQueue["orders"].Attributes; o["RawMessageDelivery"] != "true" || o["FilterPolicy"] != `{"type":["order"]}` || !strings.Contains(o["RedrivePolicy"], ":orders-dlq") {
		t.Errorf("orders subscription: %v", o)
	}
	if r := byQueue["reports"].Attributes; r["FilterPolicyScope"] != "MessageBody" {
		t.Errorf("reports subscription: %v", r)
	}
	// Triggers.
	st, err := s.triggers.Get("order-worker.orders")
	if err != nil {
		t.Fatal(err)
	}
	if st.Target.URL != fn.URL || st.Target.Headers["Authorization"] != trigger.Redacted || st.BatchSize != 5 || st.Timeout != 30 ||
		st.ScalingConfig.MaximumConcurrency != 3 || st.FunctionResponseTypes[0] != trigger.ReportBatchItemFailures || st.State != "Enabled" {
		t.Errorf("order-worker trigger: %+v", st)
	}
	if st, err := s.triggers.Get("auditor.audit.fifo"); err != nil || st.State != "Disabled" || st.Target.Command[0] != "true" {
		t.Errorf("auditor trigger: %+v %v", st, err)
	}
	if _, err := s.triggers.Get("reporter.reports"); err == nil {
		t.Error("a trigger was made for a function without a local target")
	}
	// Alarms.
	if th := s.alarms.Thresholds("orders"); th.OldestAgeShare != 0.25 {
		t.Errorf("orders thresholds: %+v", th)
	}

	// A second apply changes nothing.
	plan, err = ApplyAll(ctx, s.targets(), c, false)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Changed() {
		t.Errorf("second apply changed something:\n%s", planText(plan))
	}
	if text := planText(plan); !strings.Contains(text, "0 to create, 0 to update, 14 unchanged, 4 not applied") {
		t.Errorf("second plan:\n%s", text)
	}

	// The trigger delivers what arrives in its queue.
	if _, err := s.eng.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "orders", Entries: []tidemq.SendEntry{{ID: "1", Body: `{"id":1}`}}}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-events:
		recs, _ := ev["Records"].([]any)
		if len(recs) != 1 || recs[0].(map[string]any)["body"] != `{"id":1}` || ev["auth"] != "Bearer local" {
			t.Errorf("event: %v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the trigger did not deliver the message")
	}

	// Drift everywhere; a dry run plans it back, an apply puts it back.
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.topics.SetTopicAttributes(context.Background(), sns.SetTopicAttributesParams{TopicARN: events0, AttributeName: "DisplayName", AttributeValue: "changed"}))
	must(s.topics.SetSubscriptionAttributes(context.Background(), sns.SetSubscriptionAttributesParams{SubscriptionARN: byQueue["orders"].ARN, AttributeName: "RawMessageDelivery", AttributeValue: "false"}))
	must(s.topics.SetSubscriptionAttributes(context.Background(), sns.SetSubscriptionAttributesParams{SubscriptionARN: byQueue["orders"].ARN, AttributeName: "FilterPolicy", AttributeValue: `{"type":["other"]}`}))
	_, err = s.triggers.Update(ctx, "order-worker.orders", []byte(`{"BatchSize":2,"Enabled":false,"Target":{"Headers":{"Authorization":"Bearer drifted"}}}`))
	must(err)
	off := false
	s.alarms.SetQueueOverride("orders-dlq", alarms.Override{DLQNotEmpty: &off})
	plan, err = ApplyAll(ctx, s.targets(), c, true)
	must(err)
	text = planText(plan)
	for _, want := range []string{
		"~ topic events (update)\n    DisplayName: changed -> Order events\n",
		"~ subscription events -> sqs:orders (update)\n    RawMessageDelivery: false -> true\n    FilterPolicy: {\"type\":[\"other\"]} -> {\"type\":[\"order\"]}\n",
		"~ trigger order-worker.orders (update)\n    BatchSize: 2 -> 5\n    Enabled: false -> true\n    Secrets: (hidden, digest ",
		"~ alarm orders-dlq-depth (update)\n    orders-dlq dlq_not_empty: false -> true\n",
		"0 to create, 4 to update, 10 unchanged, 4 not applied",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("drift plan lacks %q:\n%s", want, text)
		}
	}
	if st, _ := s.triggers.Get("order-worker.orders"); st.BatchSize != 2 {
		t.Error("the dry run changed the trigger")
	}
	_, err = ApplyAll(ctx, s.targets(), c, false)
	must(err)
	if plan, _ := ApplyAll(ctx, s.targets(), c, true); plan.Changed() {
		t.Errorf("drift not put back:\n%s", planText(plan))
	}
	if st, _ := s.triggers.Get("order-worker.orders"); st.BatchSize != 5 || st.State != "Enabled" {
		t.Errorf("trigger after restore: %+v", st)
	}
	if !s.alarms.Thresholds("orders-dlq").DLQNotEmpty {
		t.Error("dlq_not_empty not restored")
	}
	// The secret put back is the one the target gets.
	if _, err := s.eng.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "orders", Entries: []tidemq.SendEntry{{ID: "1", Body: `{"id":2}`}}}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-events:
		if ev["auth"] != "Bearer local" {
			t.Errorf("after restore, the target got Authorization %q", ev["auth"])
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the restored trigger did not deliver")
	}
}

// TestApplyTopicTypeMismatch: a topic cannot change between standard and
// FIFO, so the applier stops with a clear error.
func TestApplyTopicTypeMismatch(t *testing.T) {
	s := newServer(t)
	if _, err := s.topics.CreateTopic(context.Background(), sns.CreateTopicParams{Name: "events", Attributes: nil, Tags: nil}); err != nil {
		t.Fatal(err)
	}
	c, err := Parse([]byte("topics:\n  - name: events\n    fifo: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ApplyAll(context.Background(), s.targets(), c, false); err == nil || !strings.Contains(err.Error(), "exists as a standard topic") {
		t.Errorf("err = %v", err)
	}
}

// TestApplyNotApplied: a kind without a target is listed as not applied
// when a reason is given, and left out of the plan otherwise.
func TestApplyNotApplied(t *testing.T) {
	s := newServer(t)
	c := loadFull(t, "http://127.0.0.1:1/")
	plan, err := ApplyAll(context.Background(), Targets{Queues: BrokerTarget{s.eng},
		NotApplied: map[string]string{KindAlarm: "no alarms here"}}, c, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Of(KindTopic)) != 0 || len(plan.Of(KindTrigger)) != 0 || len(plan.Of(KindAlarm)) != 4 {
		t.Errorf("plan:\n%s", planText(plan))
	}
	if ch := plan.Find(KindAlarm, "orders-age"); ch == nil || ch.Action != ActionSkip || ch.Reason != "no alarms here" {
		t.Errorf("orders-age: %+v", ch)
	}
}

func TestTriggerName(t *testing.T) {
	for _, tc := range []struct {
		tr   Trigger
		want string
	}{
		{Trigger{Function: "worker", Queue: "orders.fifo"}, "worker.orders.fifo"},
		{Trigger{Function: "worker", Queue: "arn:aws:sqs:us-east-1:000000000000:jobs"}, "worker.jobs"},
		{Trigger{Function: "my fn!", Queue: "q"}, "my-fn-.q"},
		{Trigger{Name: "mine", Function: "worker", Queue: "q"}, "mine"},
	} {
		if got := TriggerName(&tc.tr); got != tc.want {
			t.Errorf("TriggerName(%+v) = %q, want %q", tc.tr, got, tc.want)
		}
	}
	long := TriggerName(&Trigger{Function: strings.Repeat("f", 64), Queue: strings.Repeat("q", 80)})
	if len(long) != 64 || long == TriggerName(&Trigger{Function: strings.Repeat("f", 64), Queue: strings.Repeat("q", 79)}) {
		t.Errorf("long name %q", long)
	}
}

// TestTriggerConfigConcurrency: reserved concurrency caps the trigger, and
// a reservation of 0 disables it.
func TestTriggerConfigConcurrency(t *testing.T) {
	zero, one, ten := 0, 1, 10
	tr := &Trigger{Function: "f", Queue: "q", MaximumConcurrency: &ten}
	c, notes, err := TriggerConfig(tr, &Function{Name: "f", URL: "http://x/", ReservedConcurrency: &one})
	if err != nil || c.ScalingConfig.MaximumConcurrency != 2 || len(notes) != 1 || !c.IsEnabled() {
		t.Errorf("reserved 1: %+v %v %v", c, notes, err)
	}
	c, notes, _ = TriggerConfig(tr, &Function{Name: "f", URL: "http://x/", ReservedConcurrency: &zero})
	if c.IsEnabled() || len(notes) != 1 {
		t.Errorf("reserved 0: %+v %v", c, notes)
	}
	c, _, _ = TriggerConfig(&Trigger{Function: "f", Queue: "q"}, &Function{Name: "f", Command: []string{"x"}})
	if c.BatchSize != 10 || c.Timeout != 3 || c.ScalingConfig != nil || !c.IsEnabled() {
		t.Errorf("defaults: %+v", c)
	}
	if _, _, err := TriggerConfig(tr, &Function{Name: "f", URL: "http://x/", Command: []string{"x"}}); err == nil {
		t.Error("a url and a command were accepted")
	}
}

// TestMapAlarm covers which alarms become built-in alarm overrides.
func TestMapAlarm(t *testing.T) {
	c := loadFull(t, "http://x/")
	for _, tc := range []struct {
		alarm Alarm
		field string // "" when it does not map
		share float64
	}{
		{Alarm{Queue: "orders-dlq", Metric: "ApproximateNumberOfMessagesVisible", ComparisonOperator: "GreaterThanOrEqualToThreshold", Threshold: 1}, alarms.DLQNotEmpty, 0},
		{Alarm{Queue: "orders-dlq", Metric: "ApproximateNumberOfMessagesVisible", Threshold: 0}, alarms.DLQNotEmpty, 0},
		{Alarm{Queue: "orders-dlq", Metric: "ApproximateNumberOfMessagesVisible", ComparisonOperator: "GreaterThanOrEqualToThreshold", Threshold: 5}, "", 0},
		{Alarm{Queue: "orders", Metric: "ApproximateNumberOfMessagesVisible", Threshold: 0}, "", 0},
		{Alarm{Queue: "orders", Metric: "ApproximateAgeOfOldestMessage", ComparisonOperator: "GreaterThanOrEqualToThreshold", Threshold: 172800}, "oldest_age_share", 0.5},
		{Alarm{Queue: "orders", Metric: "ApproximateAgeOfOldestMessage", Threshold: 345600}, "", 0},
		{Alarm{Queue: "orders", Metric: "ApproximateAgeOfOldestMessage", ComparisonOperator: "LessThanThreshold", Threshold: 60}, "", 0},
		{Alarm{Queue: "nowhere", Metric: "ApproximateAgeOfOldestMessage", Threshold: 60}, "", 0},
	} {
		m, why := mapAlarm(c, &tc.alarm)
		switch {
		case tc.field == "" && (m != nil || why == ""):
			t.Errorf("%+v mapped to %+v", tc.alarm, m)
		case tc.field != "" && (m == nil || m.field != tc.field):
			t.Errorf("%+v: %+v, %s", tc.alarm, m, why)
		case tc.share != 0 && *m.override.OldestAgeShare != tc.share:
			t.Errorf("%+v: share %v", tc.alarm, *m.override.OldestAgeShare)
		}
	}
}

// TestAnchorsAliasesMergeKeys: a tidemq.yaml may share settings through
// anchors, aliases and merge keys, and findings keep the lines where the
// values are written.
func TestAnchorsAliasesMergeKeys(t *testing.T) {
	c, err := Parse([]byte(`version: 1
x-queue: &queue
  visibilityTimeout: 20
  messageRetentionPeriod: 345600
x-tags: &tags {team: shop, cost: "42"}
queues:
  - name: a
    <<: *queue
    redrivePolicy: {deadLetterQueue: a-dlq, maxReceiveCount: 3}
    tags: *tags
  - &dlq
    name: a-dlq
    messageRetentionPeriod: 1209600
  - name: b
    <<: [*dlq, *queue]
    visibilityTimeout: 60
functions:
  - {name: f, timeout: 30}
triggers:
  - {queue: a, function: f, batchSize: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	a, b := c.Queue("a"), c.Queue("b")
	if *a.VisibilityTimeout != 20 || a.Tags["cost"] != "42" || *b.VisibilityTimeout != 60 || *b.MessageRetentionPeriod != 1209600 {
		t.Errorf("a %+v b %+v", a, b)
	}
	// TQ001 on a points at line 3, where the merged visibilityTimeout is written.
	var got []string
	for _, f := range Lint(c) {
		if f.Rule == RuleVisibilityTimeout {
			got = append(got, f.String())
			if f.Line != 3 {
				t.Errorf("TQ001 at line %d, want 3", f.Line)
			}
		}
	}
	if len(got) != 1 {
		t.Errorf("findings: %v", Lint(c))
	}
	// Errors keep a line where they can.
	for text, want := range map[string]string{
		"x: &a {name: q}\nqueues:\n  - <<: *a\n    bogus: 1\n": "line 4: unknown field \"bogus\"",
		"queues:\n  - name: q\n    name: r\n":                  "[3:5] mapping key \"name\" already defined",
		"queues:\n  - *nothing\n":                              "line 2: alias *nothing names no anchor",
	} {
		if _, err := Parse([]byte(text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %s", text, err, want)
		}
	}
}

// TestImportTopicsAndLocalTargets: topic attributes and tags, subscription
// scope and redrive policy, and a function's Metadata.tidemq come through
// an import.
func TestImportTopicsAndLocalTargets(t *testing.T) {
	c, _, err := Import([]byte(`Resources:
  Q:
    Type: AWS::SQS::Queue
  DLQ:
    Type: AWS::SQS::Queue
  T:
    Type: AWS::SNS::Topic
    Properties:
      TopicName: events
      DisplayName: Events
      Tags: [{Key: team, Value: shop}]
  S:
    Type: AWS::SNS::Subscription
    Properties:
      TopicArn: !Ref T
      Protocol: sqs
      Endpoint: !GetAtt Q.Arn
      FilterPolicyScope: MessageBody
      FilterPolicy: {kind: [a]}
      RedrivePolicy: {deadLetterTargetArn: !GetAtt DLQ.Arn}
  F:
    Type: AWS::Serverless::Function
    Metadata:
      tidemq:
        url: !Sub http://127.0.0.1:8080/${AWS::Region}
        headers: {X-Env: local}
    Properties:
      FunctionName: worker
      Events:
        E: {Type: SQS, Properties: {Queue: !GetAtt Q.Arn, BatchSize: 1}}
`), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tp := c.Topics[0]
	if tp.DisplayName != "Events" || tp.Tags["team"] != "shop" {
		t.Errorf("topic %+v", tp)
	}
	s := tp.Subscriptions[0]
	if s.Endpoint != "Q" || s.FilterPolicyScope != "MessageBody" || s.FilterPolicy != `{"kind":["a"]}` || s.RedrivePolicy.DeadLetterQueue != "DLQ" {
		t.Errorf("subscription %+v", s)
	}
	f := c.Function("worker")
	if f.URL != "http://127.0.0.1:8080/us-east-1" || f.Headers["X-Env"] != "local" || !f.HasLocalTarget() {
		t.Errorf("function %+v", f)
	}
	_, _, err = Import([]byte("Resources:\n  F:\n    Type: AWS::Lambda::Function\n    Metadata:\n      tidemq: {uri: x}\n"), ImportOptions{})
	if err == nil || !strings.Contains(err.Error(), "line 5: Metadata.tidemq.uri: unknown key") {
		t.Errorf("err = %v", err)
	}
}

// TestBrokerTargetQueueARN: the ARNs the queue step hands to the topic
// step are the broker's.
func TestBrokerTargetQueueARN(t *testing.T) {
	s := newServer(t)
	c, _ := Parse([]byte("queues:\n  - name: q\ntopics:\n  - name: t\n    subscriptions: [{protocol: sqs, endpoint: q}]\n"))
	if _, err := ApplyAll(context.Background(), s.targets(), c, false); err != nil {
		t.Fatal(err)
	}
	subs, _ := s.topics.ListSubscriptions(context.Background(), sns.ListSubscriptionsParams{TopicARN: s.topics.TopicARN("t")})
	info, _ := s.eng.GetQueue(context.Background(), tidemq.GetQueueParams{Name: "q"})
	if len(subs) != 1 || subs[0].Endpoint != info.ARN {
		t.Errorf("subs %+v, queue %+v", subs, info)
	}
}

// TestApplyTopicTags: a topic's declared tags are set at creation and,
// when the topic store can tag, put back when they drift; otherwise the
// plan says they are left alone.
func TestApplyTopicTags(t *testing.T) {
	ctx := context.Background()
	s := newServer(t)
	c, err := Parse([]byte("topics:\n  - name: t\n    tags: {team: shop}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ApplyAll(ctx, s.targets(), c, false); err != nil {
		t.Fatal(err)
	}
	var tags map[string]string
	for _, tp := range s.topics.ListTopics(context.Background()) {
		if tp.Name == "t" {
			tags = tp.Tags
		}
	}
	if tags["team"] != "shop" {
		t.Fatalf("tags %v", tags)
	}
	c.Topics[0].Tags = map[string]string{"team": "ops"}
	plan, err := ApplyAll(ctx, s.targets(), c, false)
	if err != nil {
		t.Fatal(err)
	}
	ch := plan.Find(KindTopic, "t")
	if ch.Action != ActionUpdate || ch.TagsSet["team"] != "ops" {
		t.Errorf("change %+v", ch)
	}
	if plan, _ := ApplyAll(ctx, s.targets(), c, true); plan.Changed() {
		t.Errorf("tags not put back:\n%s", planText(plan))
	}
}

// TestPlanHidesSecrets: trigger headers and URL userinfo carry secrets;
// the plan shows the header names and a digest that still changes with any
// value; a server that shows the secrets themselves (an older tidemq) and
// one that redacts them compare the same.
func TestPlanHidesSecrets(t *testing.T) {
	cfg := func(url, auth string) *trigger.Config {
		return &trigger.Config{Name: "t", Queue: "q", Target: trigger.Target{URL: url, Headers: map[string]string{"Authorization": auth, "X-Key": "k"}}}
	}
	fields := func(c *trigger.Config) map[string]string { return triggerFields(c, trigger.SecretsDigest(c)) }
	a := fields(cfg("http://u:pw-s3cret@h/", "Bearer s3cret"))
	for k, v := range a {
		if strings.Contains(v, "s3cret") {
			t.Errorf("%s in the plan: %q", k, v)
		}
	}
	if a["Headers"] != "Authorization, X-Key" || a["Target"] != "http://********@h/" || !strings.HasPrefix(a["Secrets"], "(hidden, digest ") {
		t.Errorf("plan fields: %q", a)
	}
	if b := fields(cfg("http://u:pw-s3cret@h/", "Bearer other")); a["Secrets"] == b["Secrets"] {
		t.Errorf("a changed header value looks unchanged: %q", a["Secrets"])
	}
	if b := fields(cfg("http://u:other@h/", "Bearer s3cret")); a["Secrets"] == b["Secrets"] {
		t.Errorf("a changed password looks unchanged: %q", a["Secrets"])
	}
	old := &trigger.Status{Config: *cfg("http://u:pw-s3cret@h/", "Bearer s3cret")}
	if d := currentSecretsDigest(old); !maps.Equal(triggerFields(&old.Config, d), a) {
		t.Errorf("an older server's trigger compares as changed: %q", triggerFields(&old.Config, d))
	}
}
