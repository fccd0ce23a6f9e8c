package topology

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
)

const seedTemplate = "testdata/seed000-morpheus.yaml"

// TestSeed000Findings lints the template that seed 000 describes. "Exactly
// the problems the seed describes" means:
//
//   - EnrichmentPipelineQueue has a producer (enrichment-scraper) and no
//     consumer, because the scorer's SQS event is commented out: TQ005.
//
//   - "No CloudWatch alarm is configured on any queue metric": the three
//     DLQs have no depth alarm, TQ006 three times. (The Bedrock alarm does
//     not count: it is not on a queue metric.)
//
//   - Both FIFO queues stall a message group for one visibility timeout
//     per failure even with maxReceiveCount 1 (1 × 360 s, 1 × 180 s):
//     TQ008 as info, which the linter notes from 3 minutes.
//
// and nothing else, because the seed justifies everything else: 60-second
// visibility margins (TQ001 asks for max(30 s, 10%)), maxReceiveCount 1
// (below the 15-minute head-of-line warning),
// BatchSize 1 with ReportBatchItemFailures, ContentBasedDeduplication
// false, 14-day DLQs behind 4-day queues, email-agent's MaximumConcurrency 5
// equal to its reserved 5, morpheus-hubspot without reserved concurrency,
// and the scorer's MaximumConcurrency 50 above its reserved 5 only inside
// the comment (absent, so not linted).
func TestSeed000Findings(t *testing.T) {
	c, rep, err := ImportFile(seedTemplate, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		rule     string
		sev      Severity
		line     int
		queue    string
		resource string
	}
	want := []key{
		{RuleHeadOfLine, SeverityInfo, 33, "1 × 360 s = 6 min", "CrmSyncQueue"},
		{RuleDLQAlarm, SeverityWarning, 38, "morpheus-sam-crm-sync-dlq.fifo", "CrmSyncDLQ"},
		{RuleUnconsumedQueue, SeverityError, 45, "morpheus-sam-enrichment-pipeline.fifo", "EnrichmentPipelineQueue"},
		{RuleHeadOfLine, SeverityInfo, 52, "1 × 180 s = 3 min", "EnrichmentPipelineQueue"},
		{RuleDLQAlarm, SeverityWarning, 57, "morpheus-sam-enrichment-pipeline-dlq.fifo", "EnrichmentPipelineDLQ"},
		{RuleDLQAlarm, SeverityWarning, 74, "morpheus-sam-email-agent-dlq", "EmailAgentDLQ"},
	}
	fs := Lint(c)
	if len(fs) != len(want) {
		t.Fatalf("got %d findings, want %d:\n%v", len(fs), len(want), fs)
	}
	for i, f := range fs {
		w := want[i]
		if f.Rule != w.rule || f.Severity != w.sev || f.Line != w.line || !strings.Contains(f.Message, w.queue) || f.File != seedTemplate || f.Resource != w.resource {
			t.Errorf("finding %d = %s\nwant %+v", i, f, w)
		}
	}
	if !strings.Contains(fs[2].Message, "enrichment-scraper") || !strings.Contains(fs[2].Message, "4 days") {
		t.Errorf("TQ005 message: %s", fs[2].Message)
	}
	if len(rep.Unsupported) != 1 || rep.Unsupported[0].LogicalID != "WebhookApi" {
		t.Errorf("unsupported = %+v", rep.Unsupported)
	}
	if len(c.Alarms) != 0 {
		t.Errorf("the Bedrock alarm was imported as a queue alarm: %+v", c.Alarms)
	}
}

func TestSeed000Model(t *testing.T) {
	c, _, err := ImportFile(seedTemplate, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Queues) != 6 || len(c.Triggers) != 2 || len(c.Functions) != 6 {
		t.Fatalf("queues %d, triggers %d, functions %d", len(c.Queues), len(c.Triggers), len(c.Functions))
	}
	scorer := c.Function("enrichment-scorer")
	if scorer == nil || *scorer.Timeout != 120 || *scorer.ReservedConcurrency != 5 || !reflect.DeepEqual(scorer.Produces, []string{"morpheus-sam-crm-sync.fifo"}) || scorer.HasLocalTarget() {
		t.Errorf("scorer = %+v", scorer)
	}
	if f := c.Function("email-agent"); f == nil || f.URL != "http://127.0.0.1:8080/email-agent" {
		t.Errorf("email-agent = %+v", f)
	}
	if f := c.Function("phone-agent"); f == nil || *f.Timeout != 120 { // Globals
		t.Errorf("phone-agent = %+v", f)
	}
	hub := c.Triggers[0]
	if hub.Function != "morpheus-hubspot" || *hub.MaximumConcurrency != 10 || *hub.BatchSize != 1 || !hub.ReportBatchItemFailures {
		t.Errorf("hubspot trigger = %+v", hub)
	}
}

// TestServeConfigSeed000 is what 'tidemq serve --config' does with the
// seed template: the applier against the engine, the topic store, the
// trigger manager and the alarms, in process. It creates the six queues;
// email-agent, whose Metadata gives it a local URL, gets a trigger;
// morpheus-hubspot, without one, is listed as not applied.
func TestServeConfigSeed000(t *testing.T) {
	ctx := context.Background()
	s := newServer(t)
	eng := s.eng
	c, _, err := ImportFile(seedTemplate, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := ApplyAll(ctx, s.targets(), c, false)
	if err != nil {
		t.Fatal(err)
	}
	if qs := plan.Of(KindQueue); len(qs) != 6 || qs[0].Action != ActionCreate {
		t.Fatalf("plan = %+v", plan)
	}
	if ch := plan.Find(KindTrigger, "email-agent.morpheus-sam-email-agent"); ch == nil || ch.Action != ActionCreate {
		t.Errorf("email-agent trigger: %+v\n%s", ch, planText(plan))
	}
	if ch := plan.Find(KindTrigger, "morpheus-hubspot.morpheus-sam-crm-sync.fifo"); ch == nil || ch.Action != ActionSkip ||
		ch.Reason != "function morpheus-hubspot has no url or command to stand for it locally" {
		t.Errorf("hubspot trigger: %+v", ch)
	}
	st, err := s.triggers.Get("email-agent.morpheus-sam-email-agent")
	if err != nil || st.Target.URL != "http://127.0.0.1:8080/email-agent" || st.BatchSize != 1 || st.Timeout != 120 ||
		st.ScalingConfig.MaximumConcurrency != 5 || st.FunctionResponseTypes[0] != "ReportBatchItemFailures" || st.Queue != "morpheus-sam-email-agent" {
		t.Errorf("email-agent trigger: %+v %v", st, err)
	}
	get := func(q string) map[string]string {
		a, err := eng.GetQueueAttributes(ctx, tidemq.GetQueueAttributesParams{Queue: q, Names: []string{"All"}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	crm := get("morpheus-sam-crm-sync.fifo")
	for k, v := range map[string]string{"FifoQueue": "true", "VisibilityTimeout": "360", "MessageRetentionPeriod": "345600", "ContentBasedDeduplication": "false",
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:morpheus-sam-crm-sync-dlq.fifo","maxReceiveCount":1}`} {
		if crm[k] != v {
			t.Errorf("crm-sync %s = %q, want %q", k, crm[k], v)
		}
	}
	if a := get("morpheus-sam-crm-sync-dlq.fifo"); a["MessageRetentionPeriod"] != "1209600" || a["FifoQueue"] != "true" {
		t.Errorf("crm-sync dlq = %v", a)
	}
	if a := get("morpheus-sam-email-agent"); a["VisibilityTimeout"] != "180" || a["FifoQueue"] != "" || !strings.Contains(a["RedrivePolicy"], "morpheus-sam-email-agent-dlq") {
		t.Errorf("email-agent = %v", a)
	}
	if a := get("morpheus-sam-enrichment-pipeline.fifo"); a["VisibilityTimeout"] != "180" {
		t.Errorf("enrichment = %v", a)
	}
	// Idempotent: a second apply changes nothing.
	plan, err = ApplyAll(ctx, s.targets(), c, false)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Changed() {
		var b strings.Builder
		plan.Print(&b)
		t.Errorf("second apply changed something:\n%s", b.String())
	}
	// A drifted attribute is put back, and the plan says so.
	if err := eng.SetQueueAttributes(ctx, tidemq.SetQueueAttributesParams{Queue: "morpheus-sam-email-agent", Attributes: map[string]string{"VisibilityTimeout": "30"}}); err != nil {
		t.Fatal(err)
	}
	plan, err = ApplyAll(ctx, s.targets(), c, true) // dry run first
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	plan.Print(&b)
	if !strings.Contains(b.String(), "~ queue morpheus-sam-email-agent (update)\n    VisibilityTimeout: 30 -> 180") {
		t.Errorf("plan:\n%s", b.String())
	}
	if a := get("morpheus-sam-email-agent"); a["VisibilityTimeout"] != "30" {
		t.Error("dry run changed the queue")
	}
	if _, err := ApplyAll(ctx, s.targets(), c, false); err != nil {
		t.Fatal(err)
	}
	if a := get("morpheus-sam-email-agent"); a["VisibilityTimeout"] != "180" {
		t.Error("apply did not restore the visibility timeout")
	}
}

func TestApplyTagsAndAllowPolicy(t *testing.T) {
	ctx := context.Background()
	eng, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	c, _, err := ImportFile("testdata/intrinsics.json", ImportOptions{StackName: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(ctx, BrokerTarget{eng}, c, false); err != nil {
		t.Fatal(err)
	}
	a, _ := eng.GetQueueAttributes(ctx, tidemq.GetQueueAttributesParams{Queue: "JobsDLQ", Names: []string{"All"}})
	if !strings.Contains(a["RedriveAllowPolicy"], "arn:aws:sqs:us-east-1:000000000000:s-jobs-us-east-1") {
		t.Errorf("allow policy = %q", a["RedriveAllowPolicy"])
	}
	tags, _ := eng.ListQueueTags(ctx, tidemq.ListQueueTagsParams{Queue: "s-jobs-us-east-1"})
	if tags["team"] != "000000000000-dev" {
		t.Errorf("tags = %v", tags)
	}
	c.Queues[0].Tags = map[string]string{"owner": "x"}
	plan, err := Apply(ctx, BrokerTarget{eng}, c, false)
	if err != nil {
		t.Fatal(err)
	}
	if ch := plan.Changes[1]; ch.Queue != "s-jobs-us-east-1" || ch.Action != "update" || ch.TagsSet["owner"] != "x" || !reflect.DeepEqual(ch.TagsRemove, []string{"team"}) {
		t.Errorf("change = %+v", ch)
	}
	if plan, _ := Apply(ctx, BrokerTarget{eng}, c, false); plan.Changed() {
		t.Error("not idempotent")
	}
}

func TestImportIntrinsics(t *testing.T) {
	c, rep, err := ImportFile("testdata/intrinsics.json", ImportOptions{StackName: "s", AccountID: "123456789012"})
	if err != nil {
		t.Fatal(err)
	}
	q := c.Queue("s-jobs-us-east-1")
	if q == nil {
		t.Fatalf("queues: %+v", c.Queues)
	}
	if *q.VisibilityTimeout != 60 || *q.MessageRetentionPeriod != 86400 || q.DelaySeconds != nil || *q.ReceiveMessageWaitTimeSeconds != 20 {
		t.Errorf("queue = %+v", q)
	}
	if q.RedrivePolicy.DeadLetterQueue != "JobsDLQ" || q.RedrivePolicy.MaxReceiveCount != 4 || q.Tags["team"] != "123456789012-dev" {
		t.Errorf("queue = %+v", q)
	}
	if !strings.Contains(q.Policy, `"Resource":"arn:aws:sqs:us-east-1:123456789012:s-jobs-us-east-1"`) {
		t.Errorf("policy = %s", q.Policy)
	}
	if dlq := c.Queue("JobsDLQ"); dlq.RedriveAllowPolicy.SourceQueues[0] != "s-jobs-us-east-1" {
		t.Errorf("allow = %+v", dlq.RedriveAllowPolicy)
	}
	if len(c.Topics) != 1 || c.Topics[0].Subscriptions[0].Endpoint != "s-jobs-us-east-1" {
		t.Errorf("topics = %+v", c.Topics)
	}
	tr := c.Triggers[0]
	if tr.Function != "worker" || *tr.BatchSize != 50 || tr.IsEnabled() || *tr.MaximumConcurrency != 4 {
		t.Errorf("trigger = %+v", tr)
	}
	if len(c.Alarms) != 1 || c.Alarms[0].Queue != "JobsDLQ" {
		t.Errorf("alarms = %+v", c.Alarms)
	}
	if len(rep.Unsupported) != 1 || rep.Unsupported[0].Type != "AWS::S3::Bucket" {
		t.Errorf("unsupported = %+v", rep.Unsupported)
	}
	// Prod: the condition and the mapping switch.
	c, _, err = ImportFile("testdata/intrinsics.json", ImportOptions{StackName: "s", Parameters: map[string]string{"Env": "prod"}})
	if err != nil {
		t.Fatal(err)
	}
	if q := c.Queues[0]; *q.DelaySeconds != 5 || *q.MessageRetentionPeriod != 1209600 {
		t.Errorf("prod queue = %+v", q)
	}
	// The disabled mapping leaves a subscribed queue without a consumer.
	var rules []string
	for _, f := range Lint(c) {
		rules = append(rules, f.Rule)
	}
	if !reflect.DeepEqual(rules, []string{RuleUnconsumedQueue}) {
		t.Errorf("findings: %v", Lint(c))
	}
}

// TestImportRoundTrip: import → tidemq.yaml → parse gives the same model.
func TestImportRoundTrip(t *testing.T) {
	for _, file := range []string{seedTemplate, "testdata/intrinsics.json"} {
		c, _, err := ImportFile(file, ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		text, err := Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(text)
		if err != nil {
			t.Fatalf("%s: %v\n%s", file, err, text)
		}
		text2, _ := Marshal(back)
		if string(text) != string(text2) {
			t.Errorf("%s: round trip differs:\n%s\n---\n%s", file, text, text2)
		}
		stripLines(c)
		stripLines(back)
		c.File = ""
		if !reflect.DeepEqual(c, back) {
			t.Errorf("%s: models differ after the round trip", file)
		}
	}
}

func stripLines(c *Config) {
	for _, q := range c.Queues {
		q.src = src{}
	}
	for _, tp := range c.Topics {
		tp.src = src{}
		for _, s := range tp.Subscriptions {
			s.src = src{}
		}
	}
	for _, f := range c.Functions {
		f.src = src{}
	}
	for _, tr := range c.Triggers {
		tr.src = src{}
	}
	for _, a := range c.Alarms {
		a.src = src{}
	}
}

func TestSchemaIsValidJSONAndCoversTheModel(t *testing.T) {
	if !json.Valid(Schema) {
		t.Fatal("schema.json is not valid JSON")
	}
	for _, field := range []string{"visibilityTimeout", "redrivePolicy", "redriveAllowPolicy", "maximumConcurrency", "reportBatchItemFailures", "subscriptions", "produces"} {
		if !strings.Contains(string(Schema), `"`+field+`"`) {
			t.Errorf("schema lacks %s", field)
		}
	}
	// Every field of the model, by its YAML name, is in its definition.
	var schema struct {
		Properties map[string]any
		Defs       map[string]struct {
			Properties map[string]struct {
				Items struct {
					Properties map[string]any
				}
			}
		} `json:"$defs"`
	}
	if err := json.Unmarshal(Schema, &schema); err != nil {
		t.Fatal(err)
	}
	props := func(def string) map[string]bool {
		out := map[string]bool{}
		for k := range schema.Defs[def].Properties {
			out[k] = true
		}
		return out
	}
	subs := map[string]bool{}
	for k := range schema.Defs["topic"].Properties["subscriptions"].Items.Properties {
		subs[k] = true
	}
	for def, typ := range map[string]any{"queue": Queue{}, "topic": Topic{}, "function": Function{}, "trigger": Trigger{}, "alarm": Alarm{}} {
		checkFields(t, def, reflect.TypeOf(typ), props(def))
	}
	checkFields(t, "subscription", reflect.TypeOf(Subscription{}), subs)
	checkFields(t, "config", reflect.TypeOf(Config{}), func() map[string]bool {
		out := map[string]bool{}
		for k := range schema.Properties {
			out[k] = true
		}
		return out
	}())
}

// checkFields reports the YAML fields of typ that the schema's
// definition lacks.
func checkFields(t *testing.T, def string, typ reflect.Type, have map[string]bool) {
	t.Helper()
	for i := 0; i < typ.NumField(); i++ {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		if !have[name] {
			t.Errorf("schema %s lacks %s", def, name)
		}
	}
}

// Every imported element keeps the logical id of the template resource it
// came from, by which findings name it: a SAM function's SQS event is the
// function's id and the event's key.
func TestImportKeepsLogicalIDs(t *testing.T) {
	tmpl := `Resources:
  Jobs:
    Type: AWS::SQS::Queue
  Events:
    Type: AWS::SNS::Topic
    Properties:
      Subscription:
        - {Protocol: sqs, Endpoint: !GetAtt Jobs.Arn}
  MoreEvents:
    Type: AWS::SNS::Topic
  MoreToJobs:
    Type: AWS::SNS::Subscription
    Properties: {TopicArn: !Ref MoreEvents, Protocol: sqs, Endpoint: !GetAtt Jobs.Arn}
  Worker:
    Type: AWS::Lambda::Function
    Properties: {FunctionName: worker, Timeout: 10}
  WorkerMapping:
    Type: AWS::Lambda::EventSourceMapping
    Properties: {EventSourceArn: !GetAtt Jobs.Arn, FunctionName: !Ref Worker}
  Sam:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        FromJobs: {Type: SQS, Properties: {Queue: !GetAtt Jobs.Arn}}
  JobsAge:
    Type: AWS::CloudWatch::Alarm
    Properties:
      Namespace: AWS/SQS
      MetricName: ApproximateAgeOfOldestMessage
      Dimensions: [{Name: QueueName, Value: !GetAtt Jobs.QueueName}]
      Threshold: 60
`
	c, _, err := Import([]byte(tmpl), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, q := range c.Queues {
		got["queue "+q.Name] = q.LogicalID
	}
	for _, tp := range c.Topics {
		got["topic "+tp.Name] = tp.LogicalID
		for _, s := range tp.Subscriptions {
			got["subscription "+tp.Name] = s.LogicalID
		}
	}
	for _, f := range c.Functions {
		got["function "+f.Name] = f.LogicalID
	}
	for _, tr := range c.Triggers {
		got["trigger "+tr.Function] = tr.LogicalID
	}
	for _, a := range c.Alarms {
		got["alarm "+a.Name] = a.LogicalID
	}
	want := map[string]string{
		"queue Jobs": "Jobs", "topic Events": "Events", "subscription Events": "Events",
		"topic MoreEvents": "MoreEvents", "subscription MoreEvents": "MoreToJobs",
		"function worker": "Worker", "function Sam": "Sam",
		"trigger worker": "WorkerMapping", "trigger Sam": "Sam.Events.FromJobs", "alarm JobsAge": "JobsAge",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("logical ids\n got %v\nwant %v", got, want)
	}
}
