package topology

import (
	"strings"
	"testing"
)

// cleanTopics is clean with topics that SNS accepts: it is the negative
// case of the topic rules (TQ013–TQ016). The FIFO topic has its FIFO-only
// attributes and delivers to a FIFO queue and to a standard one (SNS and
// tidemq allow a FIFO topic to deliver to a standard queue), each
// subscription with a FIFO dead-letter queue; the standard topic delivers
// to a standard queue and to an https endpoint, with standard dead-letter
// queues, one declared and one given by its ARN.
const cleanTopics = clean + `topics:
  - name: order-events.fifo
    fifo: true
    contentBasedDeduplication: true
    fifoThroughputScope: MessageGroup
    subscriptions:
      - protocol: sqs
        endpoint: orders.fifo
        redrivePolicy:
          deadLetterQueue: orders-dlq.fifo
      - protocol: sqs
        endpoint: mail
        redrivePolicy:
          deadLetterQueue: arn:aws:sqs:us-east-1:000000000000:events-dlq.fifo
  - name: mail-events
    subscriptions:
      - protocol: sqs
        endpoint: mail
        redrivePolicy:
          deadLetterQueue: mail-dlq
      - protocol: https
        endpoint: https://hooks.example.com/mail
        redrivePolicy:
          deadLetterQueue: arn:aws:sqs:us-east-1:000000000000:hooks-dlq
`

const fifoTopicToMail = "      - protocol: sqs\n        endpoint: mail\n        redrivePolicy:\n          deadLetterQueue: arn:aws:sqs:us-east-1:000000000000:events-dlq.fifo\n"

// What the server refuses when a topology is applied is an error of lint.
func TestTopicRulesPositive(t *testing.T) {
	runRuleCases(t, cleanTopics, []ruleCase{
		{"http on a fifo topic", fifoTopicToMail, strings.Replace(fifoTopicToMail, "protocol: sqs\n        endpoint: mail", "protocol: http\n        endpoint: http://127.0.0.1:8080/mail", 1),
			RuleFIFOTopicProtocol, SeverityError, 58, "FIFO topics can only have sqs subscriptions, not http"},
		{"https on a fifo topic", fifoTopicToMail, strings.Replace(fifoTopicToMail, "protocol: sqs\n        endpoint: mail", "protocol: https\n        endpoint: https://hooks.example.com/mail", 1),
			RuleFIFOTopicProtocol, SeverityError, 58, "order-events.fifo -> https:https://hooks.example.com/mail: FIFO topics can only have sqs subscriptions, not https"},
		{"content-based dedup on a standard topic", "  - name: mail-events\n", "  - name: mail-events\n    contentBasedDeduplication: false\n",
			RuleFIFOTopicAttribute, SeverityError, 63, "topic mail-events is standard: SNS refuses ContentBasedDeduplication on it"},
		{"throughput scope on a standard topic", "  - name: mail-events\n", "  - name: mail-events\n    fifoThroughputScope: Topic\n",
			RuleFIFOTopicAttribute, SeverityError, 63, "FifoThroughputScope can only be set for FIFO topics"},
		{"standard dlq for a fifo topic", "          deadLetterQueue: orders-dlq.fifo\n", "          deadLetterQueue: mail-dlq\n",
			RuleSubscriptionDLQType, SeverityError, 57, "topic order-events.fifo is FIFO but its dead-letter queue mail-dlq is standard: SNS refuses the RedrivePolicy (must use a FIFO queue as DLQ"},
		{"fifo dlq (an ARN) for a standard topic", "hooks-dlq\n", "hooks-dlq.fifo\n",
			RuleSubscriptionDLQType, SeverityError, 71, "dead-letter queue hooks-dlq.fifo is FIFO: SNS refuses the RedrivePolicy (must use a standard queue as DLQ"},
		{"fifo queue on a standard topic", "        endpoint: mail\n        redrivePolicy:\n          deadLetterQueue: mail-dlq\n", "        endpoint: orders.fifo\n        redrivePolicy:\n          deadLetterQueue: mail-dlq\n",
			RuleSubscriptionQueue, SeverityError, 65, "FIFO SQS Queues can not be subscribed to standard SNS topics (topic mail-events is standard, queue orders.fifo is FIFO)"},
	})
}

// Variants of cleanTopics that SNS accepts lint clean: the negative cases
// of TQ013–TQ016 beyond cleanTopics itself.
func TestTopicRulesNegative(t *testing.T) {
	cases := []struct{ name, old, new string }{
		// TQ013: protocols other than http(s) are not what it is about
		// (the applier lists them as not applied).
		{"email on a fifo topic", fifoTopicToMail, fifoTopicToMail + "      - protocol: email\n        endpoint: ops@example.com\n"},
		// TQ014: false is as acceptable as true on a FIFO topic.
		{"content-based dedup off on a fifo topic", "    contentBasedDeduplication: true\n", "    contentBasedDeduplication: false\n"},
		// TQ015: no redrive policy; an undeclared FIFO DLQ by name.
		{"no subscription dlq", "        redrivePolicy:\n          deadLetterQueue: orders-dlq.fifo\n", ""},
		{"fifo dlq by name", "          deadLetterQueue: orders-dlq.fifo\n", "          deadLetterQueue: elsewhere-dlq.fifo\n"},
		// TQ016: a FIFO topic may deliver to a standard queue (it does in
		// cleanTopics) and, by ARN, to a FIFO queue; a standard topic to a
		// standard queue given by its ARN.
		{"fifo queue by ARN on a fifo topic", "        endpoint: orders.fifo\n", "        endpoint: arn:aws:sqs:us-east-1:000000000000:orders.fifo\n"},
		{"standard queue by ARN on a standard topic", "        endpoint: mail\n        redrivePolicy:\n          deadLetterQueue: mail-dlq\n", "        endpoint: arn:aws:sqs:us-east-1:000000000000:mail\n        redrivePolicy:\n          deadLetterQueue: mail-dlq\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(cleanTopics, tc.old) {
				t.Fatalf("cleanTopics has no %q", tc.old)
			}
			if fs := lintText(t, strings.Replace(cleanTopics, tc.old, tc.new, 1)); len(fs) != 0 {
				t.Errorf("findings: %v", fs)
			}
		})
	}
}

// The topic rules read a template's topics and subscriptions as imported,
// with the lines of their resources.
func TestTopicRulesOnTemplate(t *testing.T) {
	tmpl := `Resources:
  Events:
    Type: AWS::SNS::Topic
    Properties:
      TopicName: events
      ContentBasedDeduplication: true
  Jobs:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: jobs.fifo
      FifoQueue: true
  JobsSub:
    Type: AWS::SNS::Subscription
    Properties:
      TopicArn: !Ref Events
      Protocol: sqs
      Endpoint: !GetAtt Jobs.Arn
`
	c, _, err := Import([]byte(tmpl), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.File = "template.yaml"
	got := map[string]int{}
	for _, f := range Lint(c) {
		switch f.Rule {
		case RuleFIFOTopicAttribute, RuleSubscriptionQueue:
			got[f.Rule] = f.Line
		}
	}
	if got[RuleFIFOTopicAttribute] != 2 || got[RuleSubscriptionQueue] != 12 {
		t.Errorf("topic findings by rule and line: %v", got)
	}
}
