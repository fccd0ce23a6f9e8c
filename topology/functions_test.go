package topology

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq/alarms"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/trigger"
)

const lambdaTemplate = `AWSTemplateFormatVersion: "2010-09-09"
Transform: AWS::Serverless-2016-10-31
Globals:
  Function:
    Runtime: python3.12
    MemorySize: 256
    Timeout: 10
    Environment:
      Variables:
        STAGE: test
        API_KEY: global
Resources:
  Jobs:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: jobs
      VisibilityTimeout: 120
  PyWorker:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: py-worker
      CodeUri: py/
      Handler: app.handler
      Environment:
        Variables:
          API_KEY: s3cret
      Events:
        Jobs:
          Type: SQS
          Properties:
            Queue: !GetAtt Jobs.Arn
            BatchSize: 5
            FunctionResponseTypes: [ReportBatchItemFailures]
            ScalingConfig:
              MaximumConcurrency: 3
  GoWorker:
    Type: AWS::Serverless::Function
    Metadata:
      BuildMethod: go1.x
    Properties:
      CodeUri: gosrc/
      Handler: bootstrap
      Runtime: provided.al2023
      Events:
        Jobs:
          Type: SQS
          Properties:
            Queue: !GetAtt Jobs.Arn
  Missing:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: nothere/
      Handler: app.handler
      Events:
        Jobs:
          Type: SQS
          Properties:
            Queue: !GetAtt Jobs.Arn
  InS3:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: s3://bucket/key.zip
      Handler: app.handler
  Image:
    Type: AWS::Serverless::Function
    Properties:
      PackageType: Image
      ImageUri: repo/img:latest
`

// lambdaProject writes the template and the functions' code: a Python
// module, and a Go function whose sources are in gosrc/ and whose binary
// `sam build` put in .aws-sam/build/GoWorker.
func lambdaProject(t *testing.T) string {
	dir := t.TempDir()
	write := func(name, text string, mode os.FileMode) {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("template.yaml", lambdaTemplate, 0o644)
	write("py/app.py", "def handler(event, context):\n    return None\n", 0o644)
	write("gosrc/main.go", "package main\n", 0o644)
	write(".aws-sam/build/GoWorker/bootstrap", "#!/bin/sh\nexit 1\n", 0o755)
	return dir
}

func TestImportFunctionCode(t *testing.T) {
	dir := lambdaProject(t)
	c, rep, err := ImportFile(filepath.Join(dir, "template.yaml"), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	py := c.Function("py-worker")
	if py == nil || py.Runtime != "python3.12" || py.Handler != "app.handler" || py.CodeUri != "py/" || py.MemorySize == nil || *py.MemorySize != 256 ||
		py.Environment["STAGE"] != "test" || py.Environment["API_KEY"] != "s3cret" {
		t.Fatalf("py-worker = %+v", py)
	}
	if gw := c.Function("GoWorker"); gw == nil || gw.Runtime != "provided.al2023" || gw.buildID != "GoWorker" {
		t.Fatalf("GoWorker = %+v", gw)
	}
	notes := strings.Join(rep.Notes, "\n")
	for _, want := range []string{"InS3: CodeUri s3://bucket/key.zip is in S3", "Image: a container image function cannot run on tidemq"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

// A SAM function's SQS event becomes a trigger that runs its code: the
// Python module from CodeUri (relative to the template), the Go binary
// from `sam build`'s output; a function whose code is missing is not
// applied, and says why.
func TestApplyLambdaFunctions(t *testing.T) {
	dir := lambdaProject(t)
	c, _, err := ImportFile(filepath.Join(dir, "template.yaml"), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t)
	ctx := context.Background()
	plan, err := ApplyAll(ctx, s.targets(), c, false)
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.triggers.Get("py-worker.jobs")
	if err != nil {
		t.Fatalf("%v\n%s", err, planText(plan))
	}
	fn := st.Target.Function
	if fn == nil || fn.Runtime != "python3.12" || fn.Handler != "app.handler" || fn.CodeUri != filepath.Join(dir, "py") || fn.MemorySize != 256 ||
		fn.Environment["API_KEY"] != trigger.Redacted || len(fn.Environment) != 2 || st.Timeout != 10 || st.BatchSize != 5 ||
		st.ScalingConfig.MaximumConcurrency != 3 || st.FunctionResponseTypes[0] != trigger.ReportBatchItemFailures {
		t.Fatalf("py-worker trigger: %+v function %+v", st, fn)
	}
	gst, err := s.triggers.Get("GoWorker.jobs")
	if err != nil || gst.Target.Function.CodeUri != filepath.Join(dir, ".aws-sam", "build", "GoWorker") {
		t.Fatalf("GoWorker trigger: %+v %v", gst, err)
	}
	if ch := plan.Find(KindTrigger, "Missing.jobs"); ch == nil || ch.Action != ActionSkip || !strings.Contains(ch.Reason, "function Missing cannot run on tidemq: the code directory") {
		t.Fatalf("Missing: %+v", ch)
	}

	// Again: nothing changes (the environment is compared by digest).
	plan, err = ApplyAll(ctx, s.targets(), c, false)
	if err != nil {
		t.Fatal(err)
	}
	if ch := plan.Find(KindTrigger, "py-worker.jobs"); ch == nil || ch.Action != ActionUnchanged {
		t.Fatalf("second apply: %+v\n%s", ch, planText(plan))
	}
	// A new secret value is an update, shown without the value.
	c.Function("py-worker").Environment["API_KEY"] = "rotated"
	plan, err = ApplyAll(ctx, s.targets(), c, false)
	if err != nil {
		t.Fatal(err)
	}
	ch := plan.Find(KindTrigger, "py-worker.jobs")
	if ch == nil || ch.Action != ActionUpdate || strings.Contains(planText(plan), "rotated") {
		t.Fatalf("rotated secret: %+v\n%s", ch, planText(plan))
	}
}

// On a server without --allow-trigger-commands, a function's triggers are
// listed as not applied, with how to allow them; apply does not fail.
func TestApplyLambdaFunctionsWithoutCommands(t *testing.T) {
	dir := lambdaProject(t)
	c, _, err := ImportFile(filepath.Join(dir, "template.yaml"), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	m, err := trigger.NewManager(trigger.Options{Broker: eng, WaitTimeSeconds: -1})
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		m.Close(ctx)
	}()
	s := &server{eng: eng, triggers: m, alarms: alarms.New(alarms.Options{Snapshots: eng.Snapshot})}
	plan, err := ApplyAll(context.Background(), Targets{Queues: BrokerTarget{eng}, Triggers: ManagerTarget{m}, Alarms: s.alarms}, c, false)
	if err != nil {
		t.Fatal(err)
	}
	ch := plan.Find(KindTrigger, "py-worker.jobs")
	if ch == nil || ch.Action != ActionSkip || !strings.Contains(ch.Reason, "start it with --allow-trigger-commands") {
		t.Fatalf("py-worker: %+v\n%s", ch, planText(plan))
	}
	if len(m.List()) != 0 {
		t.Fatalf("triggers created: %+v", m.List())
	}
}

// In a tidemq.yaml, codeUri is relative to the file.
func TestConfigFunctionCode(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "fn"), 0o755)
	os.WriteFile(filepath.Join(dir, "fn", "worker.py"), []byte("def run(e, c):\n    pass\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "tidemq.yaml"), []byte(`version: 1
queues:
  - name: q
    visibilityTimeout: 60
functions:
  - name: worker
    runtime: python3.11
    handler: worker.run
    codeUri: fn
    memorySize: 512
    environment: {MODE: local}
triggers:
  - queue: q
    function: worker
`), 0o644)
	c, _, err := Load(filepath.Join(dir, "tidemq.yaml"), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tf, why := c.LambdaTarget(c.Function("worker"))
	if tf == nil || tf.CodeUri != filepath.Join(dir, "fn") || tf.MemorySize != 512 || tf.Environment["MODE"] != "local" {
		t.Fatalf("target %+v, %s", tf, why)
	}
}
