package e2e

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The AWS CLI (v1 speaks AWS JSON 1.0 to SQS) against one in-memory server.
// Every subtest uses its own queues, so they run in parallel.

const account = "000000000000"

// Shapes of the CLI's JSON output.
type (
	queueURLOut struct{ QueueUrl string }
	listOut     struct {
		QueueUrls []string
		NextToken string
	}
	attrsOut struct{ Attributes map[string]string }
	sendOut  struct {
		MessageId              string
		MD5OfMessageBody       string
		MD5OfMessageAttributes string
		SequenceNumber         string
	}
	msgAttr struct {
		DataType    string
		StringValue *string `json:",omitempty"`
		BinaryValue []byte  `json:",omitempty"` // base64 in JSON
	}
	message struct {
		MessageId              string
		ReceiptHandle          string
		MD5OfBody              string
		Body                   string
		Attributes             map[string]string
		MD5OfMessageAttributes string
		MessageAttributes      map[string]msgAttr
	}
	receiveOut struct{ Messages []message }
	batchOut   struct {
		Successful []struct {
			Id                     string
			MessageId              string
			MD5OfMessageBody       string
			MD5OfMessageAttributes string
		}
		Failed []struct {
			Id          string
			SenderFault bool
			Code        string
			Message     string
		}
	}
	tagsOut struct{ Tags map[string]string }
	dlqOut  struct {
		QueueUrls []string `json:"queueUrls"`
	}
)

func md5Hex(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

// attributesMD5 is MD5OfMessageAttributes as the reference (§3) defines it,
// written here independently of the server's code.
func attributesMD5(attrs map[string]msgAttr) string {
	if len(attrs) == 0 {
		return ""
	}
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf []byte
	field := func(b []byte) {
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(b)))
		buf = append(buf, b...)
	}
	for _, n := range names {
		a := attrs[n]
		field([]byte(n))
		field([]byte(a.DataType))
		if a.StringValue != nil {
			buf = append(buf, 1)
			field([]byte(*a.StringValue))
		} else {
			buf = append(buf, 2)
			field(a.BinaryValue)
		}
	}
	return md5Hex(buf)
}

func TestAttributesMD5Vectors(t *testing.T) {
	s := func(v string) *string { return &v }
	for _, tc := range []struct {
		attrs map[string]msgAttr
		want  string
	}{
		{map[string]msgAttr{"MyAttribute": {DataType: "String", StringValue: s("foobar")}}, "adb59cd4678ea5a855436b949cd07ab6"},
		{map[string]msgAttr{"attr1": {DataType: "Binary", BinaryValue: []byte("traceparent\x1e00-774062d6c37081a5a0b9b5b88e30627c-2d2482211f6489da-01")}}, "8cbe4db156db8a94db8b801b7addb984"},
		{map[string]msgAttr{
			"WeeksOn": {DataType: "Number", StringValue: s("6")},
			"Author":  {DataType: "String", StringValue: s("John Grisham")},
			"Title":   {DataType: "String", StringValue: s("The Whistler")},
		}, "d25a6aea97eb8f585bfa92d314504a92"},
	} {
		if got := attributesMD5(tc.attrs); got != tc.want {
			t.Errorf("attributesMD5(%v) = %s, want %s", tc.attrs, got, tc.want)
		}
	}
}

func (c *awsCLI) createQueue(t *testing.T, name string, extra ...string) string {
	t.Helper()
	var out queueURLOut
	c.ok(t, &out, append([]string{"create-queue", "--queue-name", name}, extra...)...)
	if out.QueueUrl == "" {
		t.Fatalf("create-queue %s: no QueueUrl", name)
	}
	return out.QueueUrl
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCLI(t *testing.T) {
	t.Parallel()
	requireAWS(t)
	s := startServer(t)
	cli := newCLI(t, s)
	t.Logf("%s against %s", awsVersion, s.url)

	// Each aws run costs about a second of CPU, so set-up and checks that
	// are not about the CLI go over plain HTTP (s.*); the commands under
	// test go through the CLI (cli.*).

	t.Run("CreateGetListQueues", func(t *testing.T) {
		t.Parallel()
		std := cli.createQueue(t, "cli-orders", "--attributes", "VisibilityTimeout=45,MessageRetentionPeriod=86400,DelaySeconds=0")
		if want := s.url + "/" + account + "/cli-orders"; std != want {
			t.Errorf("QueueUrl = %s, want %s", std, want)
		}
		fifo := cli.createQueue(t, "cli-orders.fifo", "--attributes",
			`{"FifoQueue":"true","ContentBasedDeduplication":"false","VisibilityTimeout":"360"}`)
		s.createQueue(t, "cli-other", nil)

		var got queueURLOut
		cli.ok(t, &got, "get-queue-url", "--queue-name", "cli-orders.fifo")
		if got.QueueUrl != fifo {
			t.Errorf("get-queue-url = %s, want %s", got.QueueUrl, fifo)
		}

		// One queue per page: the CLI follows NextToken and merges the pages.
		var list listOut
		cli.ok(t, &list, "list-queues", "--queue-name-prefix", "cli-orders", "--page-size", "1")
		slices.Sort(list.QueueUrls)
		if want := []string{std, fifo}; !slices.Equal(list.QueueUrls, want) {
			t.Errorf("list-queues --queue-name-prefix cli-orders --page-size 1 = %v, want %v", list.QueueUrls, want)
		}

		var attrs attrsOut
		cli.ok(t, &attrs, "get-queue-attributes", "--queue-url", fifo, "--attribute-names", "All")
		for k, v := range map[string]string{
			"FifoQueue": "true", "ContentBasedDeduplication": "false", "VisibilityTimeout": "360",
			"QueueArn": "arn:aws:sqs:us-east-1:" + account + ":cli-orders.fifo", "MaximumMessageSize": "1048576",
			"MessageRetentionPeriod": "345600", "DelaySeconds": "0", "ReceiveMessageWaitTimeSeconds": "0",
			"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesDelayed": "0", "ApproximateNumberOfMessagesNotVisible": "0",
		} {
			if attrs.Attributes[k] != v {
				t.Errorf("FIFO queue attribute %s = %q, want %q", k, attrs.Attributes[k], v)
			}
		}
		created, err := strconv.ParseInt(attrs.Attributes["CreatedTimestamp"], 10, 64)
		if now := time.Now().Unix(); err != nil || created < now-600 || created > now+600 {
			t.Errorf("CreatedTimestamp = %q, want epoch seconds near %d", attrs.Attributes["CreatedTimestamp"], now)
		}
		stdAttrs := s.queueAttrs(t, std, "All")
		if stdAttrs["VisibilityTimeout"] != "45" || stdAttrs["MessageRetentionPeriod"] != "86400" {
			t.Errorf("standard queue attributes = %v, want VisibilityTimeout 45 and MessageRetentionPeriod 86400", stdAttrs)
		}
		if _, ok := stdAttrs["FifoQueue"]; ok {
			t.Errorf("standard queue reports FifoQueue: %v", stdAttrs)
		}

		// CreateQueue is idempotent with the same attributes, and refuses
		// different ones.
		if again := cli.createQueue(t, "cli-orders", "--attributes", "VisibilityTimeout=45,MessageRetentionPeriod=86400,DelaySeconds=0"); again != std {
			t.Errorf("second create-queue = %s, want %s", again, std)
		}
		cli.fails(t, "QueueAlreadyExists", "", "create-queue", "--queue-name", "cli-orders", "--attributes", "VisibilityTimeout=46")
	})

	t.Run("MessageAttributesAndMD5", func(t *testing.T) {
		t.Parallel()
		q := s.createQueue(t, "cli-attrs", nil)
		body := `{"Message": "{\"caseId\": 1001, \"note\": \"caf\u00e9 <&>\"}", "raw": "café ☃ 🚀 \r\n"}`
		sent := map[string]msgAttr{
			"str":   {DataType: "String", StringValue: ptr("café value")},
			"num":   {DataType: "Number", StringValue: ptr("-12.50")},
			"bin":   {DataType: "Binary", BinaryValue: []byte("raw\x00\x01bytes")},
			"trace": {DataType: "String.custom", StringValue: ptr("Root=1-abc")},
		}
		// The CLI sends blobs given in its JSON as raw bytes (v1, and v2
		// with cli_binary_format raw-in-base64-out): pass the bytes as a
		// JSON string.
		cliAttrs := map[string]map[string]string{}
		for n, a := range sent {
			v := map[string]string{"DataType": a.DataType}
			if a.StringValue != nil {
				v["StringValue"] = *a.StringValue
			} else {
				v["BinaryValue"] = string(a.BinaryValue)
			}
			cliAttrs[n] = v
		}
		// The CLI does not check the MD5s (botocore has no such check); we do.
		var out sendOut
		cli.ok(t, &out, "send-message", "--queue-url", q, "--message-body", body, "--message-attributes", mustJSON(t, cliAttrs))
		if out.MessageId == "" {
			t.Error("send-message: no MessageId")
		}
		if want := md5Hex([]byte(body)); out.MD5OfMessageBody != want {
			t.Errorf("MD5OfMessageBody = %s, want %s", out.MD5OfMessageBody, want)
		}
		wantAttrMD5 := attributesMD5(sent)
		if out.MD5OfMessageAttributes != wantAttrMD5 {
			t.Errorf("MD5OfMessageAttributes = %s, want %s", out.MD5OfMessageAttributes, wantAttrMD5)
		}

		before := time.Now()
		var rcv receiveOut
		cli.ok(t, &rcv, "receive-message", "--queue-url", q, "--attribute-names", "All", "--message-attribute-names", "All", "--wait-time-seconds", "2")
		if len(rcv.Messages) != 1 {
			t.Fatalf("receive-message: %d messages, want 1", len(rcv.Messages))
		}
		m := rcv.Messages[0]
		if m.MessageId != out.MessageId || m.Body != body {
			t.Errorf("received %s %q, want %s %q", m.MessageId, m.Body, out.MessageId, body)
		}
		if m.MD5OfBody != md5Hex([]byte(body)) {
			t.Errorf("MD5OfBody = %s, want %s", m.MD5OfBody, md5Hex([]byte(body)))
		}
		if !reflect.DeepEqual(m.MessageAttributes, sent) {
			t.Errorf("MessageAttributes = %s, want %s", mustJSON(t, m.MessageAttributes), mustJSON(t, sent))
		}
		if got := attributesMD5(m.MessageAttributes); m.MD5OfMessageAttributes != got || got != wantAttrMD5 {
			t.Errorf("received MD5OfMessageAttributes = %s, computed over the returned attributes %s, at send %s", m.MD5OfMessageAttributes, got, wantAttrMD5)
		}
		// Without --auth the access key still becomes the SenderId (README).
		if m.Attributes["SenderId"] != "AKIDE2ETEST" {
			t.Errorf("SenderId = %q, want the CLI's access key AKIDE2ETEST", m.Attributes["SenderId"])
		}
		if m.Attributes["ApproximateReceiveCount"] != "1" {
			t.Errorf("ApproximateReceiveCount = %q, want 1", m.Attributes["ApproximateReceiveCount"])
		}
		sentMS, err1 := strconv.ParseInt(m.Attributes["SentTimestamp"], 10, 64)
		firstMS, err2 := strconv.ParseInt(m.Attributes["ApproximateFirstReceiveTimestamp"], 10, 64)
		nowMS := time.Now().UnixMilli()
		if err1 != nil || err2 != nil || sentMS < before.UnixMilli()-60_000 || sentMS > nowMS || firstMS < sentMS || firstMS > nowMS+1000 {
			t.Errorf("SentTimestamp %q / ApproximateFirstReceiveTimestamp %q are not epoch milliseconds of the send and the receive (now %d)",
				m.Attributes["SentTimestamp"], m.Attributes["ApproximateFirstReceiveTimestamp"], nowMS)
		}

		// Back to visible at once; then ask for one attribute by name: the
		// MD5 covers only what is returned.
		cli.ok(t, nil, "change-message-visibility", "--queue-url", q, "--receipt-handle", m.ReceiptHandle, "--visibility-timeout", "0")
		s.wantDepth(t, q, 1, 0, 0)
		cli.ok(t, &rcv, "receive-message", "--queue-url", q, "--attribute-names", "ApproximateReceiveCount", "--message-attribute-names", "str", "--wait-time-seconds", "2")
		if len(rcv.Messages) != 1 {
			t.Fatalf("receive after change-message-visibility 0: %d messages, want 1", len(rcv.Messages))
		}
		m2 := rcv.Messages[0]
		if m2.Attributes["ApproximateReceiveCount"] != "2" || len(m2.Attributes) != 1 {
			t.Errorf("second receive Attributes = %v, want only ApproximateReceiveCount 2", m2.Attributes)
		}
		want := map[string]msgAttr{"str": sent["str"]}
		if !reflect.DeepEqual(m2.MessageAttributes, want) {
			t.Errorf("--message-attribute-names str returned %s", mustJSON(t, m2.MessageAttributes))
		}
		if m2.MD5OfMessageAttributes != attributesMD5(want) {
			t.Errorf("MD5OfMessageAttributes for one attribute = %s, want %s", m2.MD5OfMessageAttributes, attributesMD5(want))
		}
		if m2.ReceiptHandle == m.ReceiptHandle {
			t.Error("the receipt handle did not change between receives")
		}

		cli.ok(t, nil, "delete-message", "--queue-url", q, "--receipt-handle", m2.ReceiptHandle)
		s.wantDepth(t, q, 0, 0, 0)
	})

	t.Run("DepthCounters", func(t *testing.T) {
		t.Parallel()
		q := s.createQueue(t, "cli-depth", nil)
		s.send(t, q, "a")
		s.send(t, q, "b")
		s.mustCall(t, "SendMessage", map[string]any{"QueueUrl": q, "MessageBody": "later", "DelaySeconds": 120})
		var rcv receiveOut
		cli.ok(t, &rcv, "receive-message", "--queue-url", q, "--visibility-timeout", "120", "--wait-time-seconds", "2")
		if len(rcv.Messages) != 1 {
			t.Fatalf("receive: %d messages, want 1", len(rcv.Messages))
		}
		var all attrsOut
		cli.ok(t, &all, "get-queue-attributes", "--queue-url", q, "--attribute-names", "All")
		n := func(k string) int { v, _ := strconv.Atoi(all.Attributes[k]); return v }
		v, d, nv := n("ApproximateNumberOfMessages"), n("ApproximateNumberOfMessagesDelayed"), n("ApproximateNumberOfMessagesNotVisible")
		if v != 1 || d != 1 || nv != 1 || v+d+nv != 3 {
			t.Errorf("visible/delayed/not visible = %d/%d/%d (total %d), want 1/1/1 (3: two sent, one delayed, one of them in flight)", v, d, nv, v+d+nv)
		}
		// By name (the seed's call) the same numbers.
		s.wantDepth(t, q, 1, 1, 1)
	})

	t.Run("Batches", func(t *testing.T) {
		t.Parallel()
		q := s.createQueue(t, "cli-batch", nil)
		entries := []map[string]any{
			{"Id": "ok-1", "MessageBody": "first"},
			{"Id": "ok_2", "MessageBody": "second", "MessageAttributes": map[string]any{"k": map[string]string{"DataType": "String", "StringValue": "v"}}},
			{"Id": "bad", "MessageBody": "control \u0001 character"},
		}
		var out batchOut
		cli.ok(t, &out, "send-message-batch", "--queue-url", q, "--entries", mustJSON(t, entries))
		ok := map[string]string{}
		for _, e := range out.Successful {
			ok[e.Id] = e.MD5OfMessageBody
			if e.MessageId == "" {
				t.Errorf("entry %s: no MessageId", e.Id)
			}
			if e.Id == "ok_2" && e.MD5OfMessageAttributes != attributesMD5(map[string]msgAttr{"k": {DataType: "String", StringValue: ptr("v")}}) {
				t.Errorf("entry ok_2: MD5OfMessageAttributes = %s", e.MD5OfMessageAttributes)
			}
		}
		if want := map[string]string{"ok-1": md5Hex([]byte("first")), "ok_2": md5Hex([]byte("second"))}; !reflect.DeepEqual(ok, want) {
			t.Errorf("Successful (id → MD5) = %v, want %v", ok, want)
		}
		if len(out.Failed) != 1 || out.Failed[0].Id != "bad" || out.Failed[0].Code != "InvalidMessageContents" || !out.Failed[0].SenderFault {
			t.Errorf("Failed = %+v, want one entry bad/InvalidMessageContents/SenderFault", out.Failed)
		}

		// A whole-request error: ids must be distinct.
		cli.fails(t, "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", "", "send-message-batch", "--queue-url", q,
			"--entries", `[{"Id":"x","MessageBody":"1"},{"Id":"x","MessageBody":"2"}]`)

		var handles []string
		for range 5 {
			for _, m := range s.receive(t, q, map[string]any{"MaxNumberOfMessages": 10, "WaitTimeSeconds": 1}) {
				handles = append(handles, str(m, "ReceiptHandle"))
			}
			if len(handles) >= 2 {
				break
			}
		}
		if len(handles) != 2 {
			t.Fatalf("received %d messages from the batch, want 2", len(handles))
		}
		del := []map[string]string{
			{"Id": "d1", "ReceiptHandle": handles[0]},
			{"Id": "d2", "ReceiptHandle": handles[1]},
			{"Id": "d3", "ReceiptHandle": "not-a-receipt-handle"},
		}
		cli.ok(t, &out, "delete-message-batch", "--queue-url", q, "--entries", mustJSON(t, del))
		var ids []string
		for _, e := range out.Successful {
			ids = append(ids, e.Id)
		}
		slices.Sort(ids)
		if !slices.Equal(ids, []string{"d1", "d2"}) {
			t.Errorf("delete-message-batch Successful = %v, want [d1 d2]", ids)
		}
		if len(out.Failed) != 1 || out.Failed[0].Id != "d3" || out.Failed[0].Code != "ReceiptHandleIsInvalid" || !out.Failed[0].SenderFault {
			t.Errorf("delete-message-batch Failed = %+v, want d3/ReceiptHandleIsInvalid/SenderFault", out.Failed)
		}
		s.wantDepth(t, q, 0, 0, 0)
	})

	t.Run("DeadLetterQueueMaxReceiveCount1", func(t *testing.T) {
		t.Parallel()
		dlq := s.createQueue(t, "cli-email-agent-dlq", map[string]string{"MessageRetentionPeriod": "1209600"})
		main := s.createQueue(t, "cli-email-agent", map[string]string{"VisibilityTimeout": "180"})
		dlqArn, mainArn := s.queueAttrs(t, dlq, "QueueArn")["QueueArn"], s.queueAttrs(t, main, "QueueArn")["QueueArn"]
		// The AWS CLI documentation's form: maxReceiveCount as a string.
		policy := `{"deadLetterTargetArn":"` + dlqArn + `","maxReceiveCount":"1"}`
		cli.ok(t, nil, "set-queue-attributes", "--queue-url", main, "--attributes", mustJSON(t, map[string]string{"RedrivePolicy": policy}))
		got := s.queueAttrs(t, main, "RedrivePolicy")["RedrivePolicy"]
		var rp struct {
			DeadLetterTargetArn string
			MaxReceiveCount     any
		}
		if err := json.Unmarshal([]byte(got), &rp); err != nil || rp.DeadLetterTargetArn != dlqArn || fmt.Sprint(rp.MaxReceiveCount) != "1" {
			t.Errorf("RedrivePolicy = %q, want deadLetterTargetArn %s and maxReceiveCount 1", got, dlqArn)
		}

		body := `{"Message": "{\"emailId\": \"e-1\"}"}`
		id := s.send(t, main, body)
		var rcv receiveOut
		cli.ok(t, &rcv, "receive-message", "--queue-url", main, "--visibility-timeout", "0", "--attribute-names", "All", "--wait-time-seconds", "2")
		if len(rcv.Messages) != 1 || rcv.Messages[0].Attributes["ApproximateReceiveCount"] != "1" {
			t.Fatalf("first receive = %+v, want the message with ApproximateReceiveCount 1", rcv.Messages)
		}
		sentTS := rcv.Messages[0].Attributes["SentTimestamp"]
		cli.ok(t, &rcv, "receive-message", "--queue-url", main, "--attribute-names", "All", "--wait-time-seconds", "1")
		if len(rcv.Messages) != 0 {
			t.Errorf("second receive returned %+v; with maxReceiveCount 1 the message should have moved to the DLQ", rcv.Messages)
		}
		s.wantDepth(t, main, 0, 0, 0)

		cli.ok(t, &rcv, "receive-message", "--queue-url", dlq, "--attribute-names", "All", "--wait-time-seconds", "2")
		if len(rcv.Messages) != 1 {
			t.Fatalf("DLQ receive: %d messages, want 1", len(rcv.Messages))
		}
		m := rcv.Messages[0]
		if m.MessageId != id || m.Body != body {
			t.Errorf("DLQ message %s %q, want %s %q", m.MessageId, m.Body, id, body)
		}
		for k, want := range map[string]string{"ApproximateReceiveCount": "2", "DeadLetterQueueSourceArn": mainArn, "SentTimestamp": sentTS} {
			if m.Attributes[k] != want {
				t.Errorf("DLQ message %s = %q, want %q", k, m.Attributes[k], want)
			}
		}
		s.wantDepth(t, dlq, 0, 0, 1)

		var src dlqOut
		cli.ok(t, &src, "list-dead-letter-source-queues", "--queue-url", dlq)
		if !slices.Equal(src.QueueUrls, []string{main}) {
			t.Errorf("list-dead-letter-source-queues = %v, want [%s]", src.QueueUrls, main)
		}

		// An empty RedrivePolicy removes it.
		cli.ok(t, nil, "set-queue-attributes", "--queue-url", main, "--attributes", `{"RedrivePolicy":""}`)
		if rp, ok := s.queueAttrs(t, main, "All")["RedrivePolicy"]; ok {
			t.Errorf("RedrivePolicy after setting it to \"\" = %q, want none", rp)
		}
		if urls := s.mustCall(t, "ListDeadLetterSourceQueues", map[string]any{"QueueUrl": dlq})["queueUrls"]; urls != nil && len(urls.([]any)) != 0 {
			t.Errorf("dead-letter source queues after removing the policy = %v, want none", urls)
		}
	})

	t.Run("Tags", func(t *testing.T) {
		t.Parallel()
		q := cli.createQueue(t, "cli-tags", "--tags", "team=crm,env=dev")
		var tags tagsOut
		cli.ok(t, &tags, "list-queue-tags", "--queue-url", q)
		if want := map[string]string{"team": "crm", "env": "dev"}; !reflect.DeepEqual(tags.Tags, want) {
			t.Errorf("tags after create-queue --tags = %v, want %v", tags.Tags, want)
		}
		rawTags := func() map[string]any {
			m, _ := s.mustCall(t, "ListQueueTags", map[string]any{"QueueUrl": q})["Tags"].(map[string]any)
			return m
		}
		cli.ok(t, nil, "tag-queue", "--queue-url", q, "--tags", "owner=ops,env=prod")
		if want := map[string]any{"team": "crm", "env": "prod", "owner": "ops"}; !reflect.DeepEqual(rawTags(), want) {
			t.Errorf("tags after tag-queue = %v, want %v", rawTags(), want)
		}
		cli.ok(t, nil, "untag-queue", "--queue-url", q, "--tag-keys", "team", "owner")
		if want := map[string]any{"env": "prod"}; !reflect.DeepEqual(rawTags(), want) {
			t.Errorf("tags after untag-queue = %v, want %v", rawTags(), want)
		}
	})

	t.Run("PurgeQueue", func(t *testing.T) {
		t.Parallel()
		q := s.createQueue(t, "cli-purge", nil)
		s.mustCall(t, "SendMessageBatch", map[string]any{"QueueUrl": q, "Entries": []map[string]any{
			{"Id": "a", "MessageBody": "a"}, {"Id": "b", "MessageBody": "b"}, {"Id": "c", "MessageBody": "c", "DelaySeconds": 120}}})
		if ms := s.receive(t, q, map[string]any{"WaitTimeSeconds": 2}); len(ms) != 1 {
			t.Fatalf("receive: %d messages, want 1", len(ms))
		}
		s.wantDepth(t, q, 1, 1, 1)
		cli.ok(t, nil, "purge-queue", "--queue-url", q)
		// AWS allows itself up to 60 s; give the server a few.
		deadline := time.Now().Add(5 * time.Second)
		for s.depth(t, q) != [3]string{"0", "0", "0"} {
			if time.Now().After(deadline) {
				t.Errorf("after purge-queue: visible/delayed/not visible = %v, want all 0", s.depth(t, q))
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		cli.fails(t, "AWS.SimpleQueueService.PurgeQueueInProgress", "Only one PurgeQueue operation on cli-purge is allowed every 60 seconds.",
			"purge-queue", "--queue-url", q)
	})

	t.Run("DeleteQueue", func(t *testing.T) {
		t.Parallel()
		q := s.createQueue(t, "cli-doomed", nil)
		cli.ok(t, nil, "delete-queue", "--queue-url", q)
		cli.fails(t, "AWS.SimpleQueueService.NonExistentQueue", "The specified queue does not exist", "get-queue-url", "--queue-name", "cli-doomed")
		if urls := s.mustCall(t, "ListQueues", map[string]any{"QueueNamePrefix": "cli-doomed"})["QueueUrls"]; urls != nil && len(urls.([]any)) != 0 {
			t.Errorf("ListQueues after delete-queue = %v", urls)
		}
		// The name can be reused at once (README: unlike SQS's 60 s).
		if again := s.createQueue(t, "cli-doomed", nil); again != q {
			t.Errorf("re-created queue URL = %s, want %s", again, q)
		}
	})

	t.Run("EndpointFromEnvironment", func(t *testing.T) {
		t.Parallel()
		// README: the CLI also finds tidemq through AWS_ENDPOINT_URL_SQS.
		// Not CLI v1: its SSL common-name customization pins
		// https://queue.amazonaws.com (or <region>.queue.amazonaws.com)
		// whenever --endpoint-url is absent, so the variable is ignored.
		if strings.HasPrefix(awsVersion, "aws-cli/1.") {
			t.Skip("AWS CLI v1 ignores AWS_ENDPOINT_URL_SQS for SQS (awscli/customizations/overridesslcommonname.py); boto3 is checked in TestBoto3")
		}
		env := append(clientEnv("AKIDE2ETEST", "e2e-secret"), "AWS_ENDPOINT_URL_SQS="+s.url, "AWS_DEFAULT_REGION=us-east-1")
		r := runTool(t, env, "aws", "sqs", "create-queue", "--queue-name", "cli-env-endpoint", "--output", "json")
		if r.code != 0 || !strings.Contains(r.stdout, s.url+"/"+account+"/cli-env-endpoint") {
			t.Errorf("create-queue with AWS_ENDPOINT_URL_SQS and no --endpoint-url:\n%s", r)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		t.Parallel()
		cli.fails(t, "AWS.SimpleQueueService.NonExistentQueue", "The specified queue does not exist", "get-queue-url", "--queue-name", "cli-no-such-queue")
		q := s.createQueue(t, "cli-errors", nil)
		cli.fails(t, "InvalidParameterValue", "Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.",
			"receive-message", "--queue-url", q, "--max-number-of-messages", "11")
		// (Other error codes and their modeled classes: boto3's ModeledExceptions.)
	})
}

func ptr[T any](v T) *T { return &v }
