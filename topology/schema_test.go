package topology

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/tidemq/tidemq"
)

// TestSchemaQueueNameAgreesWithSQS: the schema's queue-name pattern
// accepts exactly the names SQS (and the linter) accept. It once capped
// every name at 75 characters, so an editor flagged valid 76–80 character
// standard queue names.
func TestSchemaQueueNameAgreesWithSQS(t *testing.T) {
	var s struct {
		Defs map[string]struct {
			Properties map[string]struct {
				Pattern   string
				MaxLength int
			}
		} `json:"$defs"`
	}
	if err := json.Unmarshal(Schema, &s); err != nil {
		t.Fatal(err)
	}
	name := s.Defs["queue"].Properties["name"]
	re := regexp.MustCompile(name.Pattern)
	schemaOK := func(n string) bool { return re.MatchString(n) && len(n) <= name.MaxLength }
	for _, n := range []string{
		"q", "orders_dlq-1", strings.Repeat("a", 75), strings.Repeat("a", 76), strings.Repeat("a", 80), strings.Repeat("a", 81),
		"q.fifo", strings.Repeat("a", 75) + ".fifo", strings.Repeat("a", 76) + ".fifo", ".fifo", "", "a.b", "a b", "q.fifo.fifo",
	} {
		fifo := strings.HasSuffix(n, ".fifo")
		sqsOK := tidemq.ValidateQueueName(n, fifo) == nil
		if schemaOK(n) != sqsOK {
			t.Errorf("queue name %q (%d chars): schema accepts %v, SQS %v", n, len(n), schemaOK(n), sqsOK)
		}
	}
}

// TestSchemaAllowsExtensionKeysWhereTheModelDoes: the model ignores x-
// keys in every object (they hold anchors and notes); the schema must not
// flag them in an editor.
func TestSchemaAllowsExtensionKeysWhereTheModelDoes(t *testing.T) {
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if x["additionalProperties"] == false {
				pp, _ := x["patternProperties"].(map[string]any)
				if _, ok := pp["^x-"]; !ok {
					t.Errorf("%s: additionalProperties false without patternProperties ^x-", path)
				}
			}
			for k, e := range x {
				walk(path+"/"+k, e)
			}
		case []any:
			for _, e := range x {
				walk(path, e)
			}
		}
	}
	var doc any
	if err := json.Unmarshal(Schema, &doc); err != nil {
		t.Fatal(err)
	}
	walk("#", doc)
	// And the model does accept them at each of those levels.
	_, err := Parse([]byte(`x-top: 1
queues:
  - name: q
    x-a: 1
    redrivePolicy: {deadLetterQueue: d, maxReceiveCount: 1, x-b: 1}
    redriveAllowPolicy: {redrivePermission: allowAll, x-c: 1}
topics:
  - name: t
    x-d: 1
    subscriptions:
      - {protocol: sqs, endpoint: q, x-e: 1, redrivePolicy: {deadLetterQueue: d, x-f: 1}}
functions: [{name: f, x-g: 1}]
triggers: [{queue: q, function: f, x-h: 1}]
alarms: [{name: a, queue: q, metric: m, threshold: 1, x-i: 1}]
`))
	if err != nil {
		t.Fatal(err)
	}
}
