package brokertest

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/tidemq/tidemq"
)

// attributeChecks cover GetQueueAttributes and SetQueueAttributes
// (reference §1 queue attribute names, §4 ranges and quirks).
func attributeChecks() []check {
	return []check{
		{"DefaultsOfAStandardQueue", func(e *env) {
			e.create("std", nil)
			a := e.attrs("std")
			want := map[string]string{
				tidemq.AttrVisibilityTimeout:                     "30",
				tidemq.AttrMaximumMessageSize:                    "1048576",
				tidemq.AttrMessageRetentionPeriod:                "345600",
				tidemq.AttrDelaySeconds:                          "0",
				tidemq.AttrReceiveMessageWaitTimeSeconds:         "0",
				tidemq.AttrSqsManagedSseEnabled:                  "true",
				tidemq.AttrQueueArn:                              "arn:aws:sqs:us-east-1:000000000000:std",
				tidemq.AttrCreatedTimestamp:                      "1700000000",
				tidemq.AttrLastModifiedTimestamp:                 "1700000000",
				tidemq.AttrApproximateNumberOfMessages:           "0",
				tidemq.AttrApproximateNumberOfMessagesNotVisible: "0",
				tidemq.AttrApproximateNumberOfMessagesDelayed:    "0",
			}
			for k, v := range want {
				if got, ok := a[k]; !ok || got != v {
					e.t.Errorf("fresh standard queue: %s = %q (present %v), want %q", k, got, ok, v)
				}
			}
			for _, k := range []string{tidemq.AttrFifoQueue, tidemq.AttrContentBasedDeduplication, tidemq.AttrDeduplicationScope,
				tidemq.AttrFifoThroughputLimit} {
				if v, ok := a[k]; ok {
					e.t.Errorf("standard queue reports the FIFO attribute %s = %q", k, v)
				}
			}
		}},
		{"DefaultsOfAFIFOQueue", func(e *env) {
			e.create("f.fifo", nil)
			a := e.attrs("f.fifo")
			want := map[string]string{
				tidemq.AttrFifoQueue:                 "true",
				tidemq.AttrContentBasedDeduplication: "false",
				tidemq.AttrDeduplicationScope:        "queue",
				tidemq.AttrFifoThroughputLimit:       "perQueue",
				tidemq.AttrVisibilityTimeout:         "30",
				tidemq.AttrMaximumMessageSize:        "1048576",
				tidemq.AttrMessageRetentionPeriod:    "345600",
				tidemq.AttrDelaySeconds:              "0",
				tidemq.AttrQueueArn:                  "arn:aws:sqs:us-east-1:000000000000:f.fifo",
				tidemq.AttrSqsManagedSseEnabled:      "true",
			}
			for k, v := range want {
				if a[k] != v {
					e.t.Errorf("fresh FIFO queue: %s = %q, want %q", k, a[k], v)
				}
			}
		}},
		{"GetSelectsNames", func(e *env) {
			e.create("q", nil)
			none, err := e.tryAttrs("q")
			e.ok(err, "GetQueueAttributes without names")
			if len(none) != 0 {
				e.t.Fatalf("GetQueueAttributes without names returned %v, want nothing", none)
			}
			some := e.attrs("q", tidemq.AttrDelaySeconds, tidemq.AttrQueueArn)
			if len(some) != 2 || some[tidemq.AttrDelaySeconds] != "0" || some[tidemq.AttrQueueArn] != e.arn("q") {
				e.t.Fatalf("GetQueueAttributes(DelaySeconds, QueueArn) = %v", some)
			}
			all := e.attrs("q", tidemq.AttrAll)
			if len(all) < 12 {
				e.t.Fatalf("GetQueueAttributes(All) returned only %d attributes: %v", len(all), all)
			}
			both := e.attrs("q", tidemq.AttrAll, tidemq.AttrDelaySeconds)
			if len(both) != len(all) {
				e.t.Fatalf("GetQueueAttributes(All, DelaySeconds) returned %d attributes, All alone %d", len(both), len(all))
			}
		}},
		{"GetUnknownNameIsInvalidAttributeName", func(e *env) {
			e.create("q", nil)
			_, err := e.tryAttrs("q", "NoSuchAttribute")
			e.wantCode(err, tidemq.ErrInvalidAttributeName, "GetQueueAttributes(NoSuchAttribute)")
			_, err = e.tryAttrs("q", tidemq.AttrDelaySeconds, "visibilitytimeout")
			e.wantCode(err, tidemq.ErrInvalidAttributeName, "GetQueueAttributes with a wrongly cased name")
		}},
		{"SetAndGet", func(e *env) {
			e.create("q", nil)
			e.advance(10 * time.Second)
			e.set("q", map[string]string{
				tidemq.AttrVisibilityTimeout:             "45",
				tidemq.AttrDelaySeconds:                  "10",
				tidemq.AttrMessageRetentionPeriod:        "120",
				tidemq.AttrMaximumMessageSize:            "2048",
				tidemq.AttrReceiveMessageWaitTimeSeconds: "20",
			})
			a := e.attrs("q")
			for k, v := range map[string]string{
				tidemq.AttrVisibilityTimeout:             "45",
				tidemq.AttrDelaySeconds:                  "10",
				tidemq.AttrMessageRetentionPeriod:        "120",
				tidemq.AttrMaximumMessageSize:            "2048",
				tidemq.AttrReceiveMessageWaitTimeSeconds: "20",
			} {
				if a[k] != v {
					e.t.Errorf("after SetQueueAttributes, %s = %q, want %q", k, a[k], v)
				}
			}
			e.create("f.fifo", nil)
			e.set("f.fifo", map[string]string{tidemq.AttrContentBasedDeduplication: "true", tidemq.AttrDeduplicationScope: "messageGroup",
				tidemq.AttrFifoThroughputLimit: "perMessageGroupId"})
			f := e.attrs("f.fifo")
			if f[tidemq.AttrContentBasedDeduplication] != "true" || f[tidemq.AttrDeduplicationScope] != "messageGroup" ||
				f[tidemq.AttrFifoThroughputLimit] != "perMessageGroupId" {
				e.t.Errorf("FIFO attributes after SetQueueAttributes: %v", f)
			}
		}},
		{"TimestampsAreEpochSecondsAndLastModifiedMoves", func(e *env) {
			e.create("q", nil)
			a := e.attrs("q")
			wantSeconds := strconv.FormatInt(Start.Unix(), 10)
			if a[tidemq.AttrCreatedTimestamp] != wantSeconds || a[tidemq.AttrLastModifiedTimestamp] != wantSeconds {
				e.t.Fatalf("CreatedTimestamp %q, LastModifiedTimestamp %q, want both %s (epoch seconds)",
					a[tidemq.AttrCreatedTimestamp], a[tidemq.AttrLastModifiedTimestamp], wantSeconds)
			}
			e.advance(100 * time.Second)
			e.set("q", map[string]string{tidemq.AttrVisibilityTimeout: "40"})
			a = e.attrs("q")
			moved := strconv.FormatInt(Start.Unix()+100, 10)
			if a[tidemq.AttrLastModifiedTimestamp] != moved {
				e.t.Fatalf("LastModifiedTimestamp after SetQueueAttributes 100 s later = %q, want %s", a[tidemq.AttrLastModifiedTimestamp], moved)
			}
			if a[tidemq.AttrCreatedTimestamp] != wantSeconds {
				e.t.Fatalf("CreatedTimestamp changed to %q by SetQueueAttributes", a[tidemq.AttrCreatedTimestamp])
			}
		}},
		{"SetInvalidValuesIsInvalidAttributeValue", func(e *env) {
			e.create("q", nil)
			for _, c := range []struct{ name, value string }{
				{tidemq.AttrVisibilityTimeout, "43201"},
				{tidemq.AttrVisibilityTimeout, "-1"},
				{tidemq.AttrVisibilityTimeout, "abc"},
				{tidemq.AttrMaximumMessageSize, "1023"},
				{tidemq.AttrMaximumMessageSize, "1048577"},
				{tidemq.AttrMessageRetentionPeriod, "59"},
				{tidemq.AttrMessageRetentionPeriod, "1209601"},
				{tidemq.AttrDelaySeconds, "901"},
				{tidemq.AttrReceiveMessageWaitTimeSeconds, "21"},
				{tidemq.AttrSqsManagedSseEnabled, "maybe"},
			} {
				e.wantCode(e.trySet("q", map[string]string{c.name: c.value}), tidemq.ErrInvalidAttributeValue, "SetQueueAttributes %s=%q", c.name, c.value)
			}
			e.create("f.fifo", nil)
			e.wantCode(e.trySet("f.fifo", map[string]string{tidemq.AttrDeduplicationScope: "group"}), tidemq.ErrInvalidAttributeValue,
				"SetQueueAttributes DeduplicationScope=group")
			e.wantCode(e.trySet("f.fifo", map[string]string{tidemq.AttrContentBasedDeduplication: "yes"}), tidemq.ErrInvalidAttributeValue,
				"SetQueueAttributes ContentBasedDeduplication=yes")
			if a := e.attrs("q"); a[tidemq.AttrVisibilityTimeout] != "30" || a[tidemq.AttrDelaySeconds] != "0" {
				e.t.Fatalf("refused SetQueueAttributes changed the queue: %v", a)
			}
		}},
		{"SetIsAllOrNothing", func(e *env) {
			e.create("q", nil)
			err := e.trySet("q", map[string]string{tidemq.AttrVisibilityTimeout: "50", tidemq.AttrDelaySeconds: "901"})
			e.wantCode(err, tidemq.ErrInvalidAttributeValue, "SetQueueAttributes with one bad value")
			if v := e.attrs("q")[tidemq.AttrVisibilityTimeout]; v != "30" {
				e.t.Fatalf("a refused SetQueueAttributes applied VisibilityTimeout=%s", v)
			}
		}},
		{"SetUnknownOrReadOnlyIsInvalidAttributeName", func(e *env) {
			e.create("q", nil)
			for _, name := range []string{"NoSuchAttribute", tidemq.AttrQueueArn, tidemq.AttrApproximateNumberOfMessages,
				tidemq.AttrCreatedTimestamp, tidemq.AttrFifoQueue} {
				e.wantCode(e.trySet("q", map[string]string{name: "1"}), tidemq.ErrInvalidAttributeName, "SetQueueAttributes %s on a standard queue", name)
			}
			e.wantCode(e.trySet("q", map[string]string{tidemq.AttrFifoQueue: "true"}), tidemq.ErrInvalidAttributeName,
				"SetQueueAttributes FifoQueue=true on a standard queue")
			e.create("f.fifo", nil)
			e.wantCode(e.trySet("f.fifo", map[string]string{tidemq.AttrFifoQueue: "false"}), tidemq.ErrInvalidAttributeValue,
				"SetQueueAttributes FifoQueue=false on a FIFO queue (modifying the queue type)")
		}},
		{"ServerSideEncryptionKMSAndSQSAreExclusive", func(e *env) {
			kms := []string{tidemq.AttrKmsMasterKeyID, tidemq.AttrKmsDataKeyReusePeriodSeconds, tidemq.AttrSqsManagedSseEnabled}
			want := func(q, key, period, sse, when string) {
				e.t.Helper()
				a := e.attrs(q, tidemq.AttrAll)
				if a[kms[0]] != key || a[kms[1]] != period || a[kms[2]] != sse {
					e.t.Fatalf("%s: KmsMasterKeyId %q, KmsDataKeyReusePeriodSeconds %q, SqsManagedSseEnabled %q; want %q, %q, %q",
						when, a[kms[0]], a[kms[1]], a[kms[2]], key, period, sse)
				}
			}
			e.create("q", map[string]string{tidemq.AttrKmsMasterKeyID: "alias/aws/sqs"})
			want("q", "alias/aws/sqs", "300", "false", "created with a KMS key")
			e.set("q", map[string]string{tidemq.AttrKmsDataKeyReusePeriodSeconds: "600"})
			e.set("q", map[string]string{tidemq.AttrSqsManagedSseEnabled: "true"})
			want("q", "", "", "true", "after SqsManagedSseEnabled=true")
			e.set("q", map[string]string{tidemq.AttrKmsMasterKeyID: "alias/mine", tidemq.AttrKmsDataKeyReusePeriodSeconds: "120"})
			want("q", "alias/mine", "120", "false", "after setting a KMS key and a reuse period")
			e.set("q", map[string]string{tidemq.AttrKmsMasterKeyID: ""})
			want("q", "", "", "false", `after KmsMasterKeyId=""`)
			for _, f := range []func() error{
				func() error {
					_, err := e.tryCreate("both", map[string]string{tidemq.AttrKmsMasterKeyID: "alias/aws/sqs", tidemq.AttrSqsManagedSseEnabled: "true"})
					return err
				},
				func() error {
					return e.trySet("q", map[string]string{tidemq.AttrKmsMasterKeyID: "alias/aws/sqs", tidemq.AttrSqsManagedSseEnabled: "true"})
				},
			} {
				e.wantMessage(f(), tidemq.ErrInvalidAttributeName, "You can use one type of server-side encryption (SSE) at one time.",
					"a KMS key and SqsManagedSseEnabled=true in one request")
			}
		}},
		{"SetFifoQueueTrueOnAFIFOQueueIsAccepted", func(e *env) {
			// AWS accepts FifoQueue=true on a FIFO queue (it changes
			// nothing) and refuses false, and any value on a standard queue.
			e.create("f.fifo", nil)
			e.ok(e.trySet("f.fifo", map[string]string{tidemq.AttrFifoQueue: "true", tidemq.AttrVisibilityTimeout: "45"}),
				"SetQueueAttributes FifoQueue=true on a FIFO queue")
			a := e.attrs("f.fifo", tidemq.AttrAll)
			if a[tidemq.AttrFifoQueue] != "true" || a[tidemq.AttrVisibilityTimeout] != "45" {
				e.t.Fatalf("after SetQueueAttributes FifoQueue=true, VisibilityTimeout=45: FifoQueue %q, VisibilityTimeout %q",
					a[tidemq.AttrFifoQueue], a[tidemq.AttrVisibilityTimeout])
			}
			e.wantMessage(e.trySet("f.fifo", map[string]string{tidemq.AttrFifoQueue: "false"}), tidemq.ErrInvalidAttributeValue,
				"Modifying queue type is not supported.", "SetQueueAttributes FifoQueue=false on a FIFO queue")
			e.wantCode(e.trySet("f.fifo", map[string]string{tidemq.AttrFifoQueue: "maybe"}), tidemq.ErrInvalidAttributeValue,
				"SetQueueAttributes FifoQueue=maybe on a FIFO queue")
			e.create("q", nil)
			e.wantMessage(e.trySet("q", map[string]string{tidemq.AttrFifoQueue: "true"}), tidemq.ErrInvalidAttributeName,
				"Unknown Attribute FifoQueue.", "SetQueueAttributes FifoQueue=true on a standard queue")
		}},
	}
}

// permissionChecks cover AddPermission and RemovePermission, seen through
// the Policy attribute.
func permissionChecks() []check {
	return []check{
		{"AddAndRemoveShowInPolicy", func(e *env) {
			e.create("q", nil)
			e.ok(e.b.AddPermission(e.ctx, tidemq.AddPermissionParams{Queue: "q", Label: "senders",
				AccountIDs: []string{"111122223333"}, Actions: []string{"SendMessage"}}), "AddPermission(senders)")
			e.ok(e.b.AddPermission(e.ctx, tidemq.AddPermissionParams{Queue: "q", Label: "readers",
				AccountIDs: []string{"111122223333", "444455556666"}, Actions: []string{"ReceiveMessage", "DeleteMessage"}}),
				"AddPermission(readers)")
			wantSids(e, "q", []string{"readers", "senders"})
			e.ok(e.b.RemovePermission(e.ctx, tidemq.RemovePermissionParams{Queue: "q", Label: "senders"}), "RemovePermission(senders)")
			wantSids(e, "q", []string{"readers"})
			e.wantCode(e.b.RemovePermission(e.ctx, tidemq.RemovePermissionParams{Queue: "q", Label: "senders"}), tidemq.ErrInvalidParameterValue, "RemovePermission of a removed label")
			e.ok(e.b.RemovePermission(e.ctx, tidemq.RemovePermissionParams{Queue: "q", Label: "readers"}), "RemovePermission(readers)")
			wantSids(e, "q", nil)
		}},
		{"PolicyInAWSShape", func(e *env) {
			// The document AWS writes for AddPermission: Version
			// 2008-10-17, Id <arn>/SQSDefaultPolicy, and a single principal
			// or action as a string, several as a list.
			e.create("q", nil)
			e.ok(e.b.AddPermission(e.ctx, tidemq.AddPermissionParams{Queue: "q", Label: "one",
				AccountIDs: []string{"111122223333"}, Actions: []string{"SendMessage"}}), "AddPermission(one)")
			e.ok(e.b.AddPermission(e.ctx, tidemq.AddPermissionParams{Queue: "q", Label: "two",
				AccountIDs: []string{"111122223333", "444455556666"}, Actions: []string{"ReceiveMessage", "DeleteMessage"}}),
				"AddPermission(two)")
			var doc struct {
				Version   string
				ID        string `json:"Id"`
				Statement []struct {
					Sid, Effect, Resource string
					Principal             map[string]any
					Action                any
				}
			}
			policy := e.attrs("q", tidemq.AttrPolicy)[tidemq.AttrPolicy]
			if err := json.Unmarshal([]byte(policy), &doc); err != nil {
				e.t.Fatalf("Policy is not a JSON policy document: %v\n%s", err, policy)
			}
			if doc.Version != "2008-10-17" || doc.ID != e.arn("q")+"/SQSDefaultPolicy" || len(doc.Statement) != 2 {
				e.t.Fatalf("Policy %s: want Version 2008-10-17, Id %s/SQSDefaultPolicy and 2 statements", policy, e.arn("q"))
			}
			one, two := doc.Statement[0], doc.Statement[1]
			if one.Sid != "one" || one.Effect != "Allow" || one.Resource != e.arn("q") ||
				one.Principal["AWS"] != "arn:aws:iam::111122223333:root" || one.Action != "SQS:SendMessage" {
				e.t.Fatalf("statement for one account and one action: %+v; want Principal {\"AWS\": \"arn:aws:iam::111122223333:root\"} and Action \"SQS:SendMessage\" as strings", one)
			}
			if p, ok := two.Principal["AWS"].([]any); !ok || len(p) != 2 {
				e.t.Fatalf("statement for two accounts: Principal %v, want a list of two", two.Principal)
			}
			if a, ok := two.Action.([]any); !ok || len(a) != 2 {
				e.t.Fatalf("statement for two actions: Action %v, want a list of two", two.Action)
			}
		}},
		{"RemoveUnknownLabelIsInvalidParameterValue", func(e *env) {
			e.create("q", nil)
			// AWS words it "…Reason: can't find label."
			e.wantMessage(e.b.RemovePermission(e.ctx, tidemq.RemovePermissionParams{Queue: "q", Label: "nosuchlabel"}), tidemq.ErrInvalidParameterValue,
				"Value nosuchlabel for parameter Label is invalid. Reason: can't find label.", "RemovePermission(nosuchlabel)")
		}},
	}
}

// wantSids checks the Sids of the Statement list in q's Policy attribute.
// No statements may also be shown as no (or an empty) Policy.
func wantSids(e *env, q string, want []string) {
	e.t.Helper()
	policy := e.attrs(q, tidemq.AttrPolicy)[tidemq.AttrPolicy]
	var doc struct {
		Statement []struct {
			Sid string
		}
	}
	if policy != "" {
		if err := json.Unmarshal([]byte(policy), &doc); err != nil {
			e.t.Fatalf("Policy of %s is not a JSON policy document: %v\n%s", q, err, policy)
		}
	} else if len(want) > 0 {
		e.t.Fatalf("Policy of %s is empty, want statements %v", q, want)
	}
	got := map[string]bool{}
	for _, s := range doc.Statement {
		got[s.Sid] = true
	}
	if len(got) != len(want) || len(doc.Statement) != len(want) {
		e.t.Fatalf("Policy of %s has statements %v, want Sids %v\n%s", q, got, want, policy)
	}
	for _, w := range want {
		if !got[w] {
			e.t.Fatalf("Policy of %s lacks a statement with Sid %q\n%s", q, w, policy)
		}
	}
}
