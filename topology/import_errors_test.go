package topology

import (
	"strings"
	"testing"
)

// TestImportErrorsAreNotSwallowed: a value the importer cannot evaluate is
// an error naming its line, never a silent default. Each case once
// imported "successfully": a FIFO queue as standard, an enabled event
// source as disabled, an alarm with threshold 0, and resources under two
// conditions that name each other dropped.
func TestImportErrorsAreNotSwallowed(t *testing.T) {
	const base = `Conditions:
  Yes: !Equals [a, a]
Resources:
  Q:
    Type: AWS::SQS::Queue
    Properties:
      FifoQueue: QUEUEFIFO
  F:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        E:
          Type: SQS
          Properties:
            Queue: !GetAtt Q.Arn
            BatchSize: 1
            Enabled: ENABLED
  A:
    Type: AWS::CloudWatch::Alarm
    Properties:
      Namespace: AWS/SQS
      MetricName: ApproximateNumberOfMessagesVisible
      Dimensions: [{Name: QueueName, Value: !GetAtt Q.QueueName}]
      ComparisonOperator: GreaterThanThreshold
      Threshold: THRESHOLD
  T:
    Type: AWS::SNS::Topic
    Properties:
      FifoTopic: TOPICKIND
  S:
    Type: AWS::SNS::Subscription
    Properties:
      TopicArn: !Ref T
      Protocol: sqs
      Endpoint: !GetAtt Q.Arn
      RawMessageDelivery: RAW
  Later:
    Type: AWS::SQS::Queue
    Condition: COND
`
	good := strings.NewReplacer("QUEUEFIFO", "true", "ENABLED", "true", "THRESHOLD", "0", "TOPICKIND", "false", "RAW", "true", "COND", "Yes")
	c, _, err := Import([]byte(good.Replace(base)), ImportOptions{})
	if err != nil {
		t.Fatalf("the good template: %v", err)
	}
	if !c.Queues[0].FIFO || !c.Triggers[0].IsEnabled() || c.Topics[0].FIFO || !c.Topics[0].Subscriptions[0].RawMessageDelivery || len(c.Queues) != 2 {
		t.Fatalf("the good template imported wrong: %+v %+v %+v", c.Queues[0], c.Triggers[0], c.Topics[0])
	}
	for _, tc := range []struct{ from, to, want string }{
		{"QUEUEFIFO", "!If [NoSuchCondition, true, false]", `line 7: Fn::If: no condition "NoSuchCondition"`},
		{"QUEUEFIFO", "!Ref NoSuchParameter", `unknown reference "NoSuchParameter"`},
		{"QUEUEFIFO", "maybe", `line 7: expected true or false, not "maybe"`},
		{"ENABLED", "!Ref EnableScorer", `unknown reference "EnableScorer"`},
		{"THRESHOLD", "!Ref Threshold", `unknown reference "Threshold"`},
		{"THRESHOLD", "zero", `Threshold must be a number, not "zero"`},
		{"TOPICKIND", "!If [Nope, true, false]", `no condition "Nope"`},
		{"RAW", "!Ref Raw", `unknown reference "Raw"`},
	} {
		r := strings.NewReplacer(tc.from, tc.to)
		doc := good.Replace(r.Replace(base))
		if _, _, err := Import([]byte(doc), ImportOptions{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %s: err = %v, want %q", tc.from, tc.to, err, tc.want)
		}
	}
	// Conditions that depend on each other are an error, as in
	// CloudFormation, not false.
	cyc := strings.Replace(good.Replace(base), "  Yes: !Equals [a, a]\n", "  Yes: !Condition No\n  No: !Not [!Condition Yes]\n", 1)
	if _, _, err := Import([]byte(cyc), ImportOptions{}); err == nil || !strings.Contains(err.Error(), "depends on itself") {
		t.Errorf("condition cycle: err = %v", err)
	}
	// AWS::NoValue for a boolean is "not set", not an error.
	nv := strings.Replace(good.Replace(base), "Threshold: 0", "Threshold: 0\n  Q2:\n    Type: AWS::SQS::Queue\n    Properties:\n      ContentBasedDeduplication: !Ref AWS::NoValue", 1)
	c, _, err = Import([]byte(nv), ImportOptions{})
	if err != nil || c.Queue("Q2") == nil || c.Queue("Q2").ContentBasedDeduplication != nil {
		t.Errorf("NoValue: err %v, %+v", err, c)
	}
}

// A parameter without a default must be given; the error names the flag
// of the command in use (ImportOptions.ParamFlag, "--param" by default).
func TestMissingParameterNamesTheFlag(t *testing.T) {
	const tmpl = `Parameters:
  Stage:
    Type: String
Resources:
  Q:
    Type: AWS::SQS::Queue
    Properties: {QueueName: !Sub "jobs-${Stage}"}
`
	for _, c := range []struct{ flag, want string }{
		{"", "line 2: parameter Stage has no default: give it with --param Stage=VALUE"},
		{"--config-param", "line 2: parameter Stage has no default: give it with --config-param Stage=VALUE"},
	} {
		_, _, err := Import([]byte(tmpl), ImportOptions{ParamFlag: c.flag})
		if err == nil || err.Error() != c.want {
			t.Errorf("ParamFlag %q: err = %v, want %q", c.flag, err, c.want)
		}
	}
	c, _, err := Import([]byte(tmpl), ImportOptions{Parameters: map[string]string{"Stage": "dev"}, ParamFlag: "--config-param"})
	if err != nil || len(c.Queues) != 1 || c.Queues[0].Name != "jobs-dev" {
		t.Errorf("with Stage=dev: %v %+v", err, c)
	}
}
