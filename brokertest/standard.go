package brokertest

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/tidemq/tidemq"
)

// standardChecks cover send, receive and delete on a standard queue
// (reference §4 limits and §5 semantics).
func standardChecks() []check {
	return []check{
		{"BodyRoundTrip", func(e *env) {
			e.create("q", nil)
			body := "héllo, wörld — 世界 🎉\ttab\nnewline\rcr \u00a0\ue000\U0010fffd <xml attr=\"&amp;\"/>"
			sent := e.sendBody("q", body)
			m := e.receiveOne("q")
			if m.Body != body {
				e.t.Fatalf("body round trip: got %q, want %q", m.Body, body)
			}
			if m.MessageID != sent.MessageID {
				e.t.Fatalf("received MessageId %q, sent %q", m.MessageID, sent.MessageID)
			}
			if sent.SequenceNumber != "" || m.SequenceNumber != "" {
				e.t.Fatalf("standard queue message has a SequenceNumber (%q, %q)", sent.SequenceNumber, m.SequenceNumber)
			}
		}},
		{"MessageIDsAreUnique", func(e *env) {
			e.create("q", nil)
			seen := map[string]bool{}
			for i := 0; i < 50; i++ {
				id := e.sendBody("q", "same body").MessageID
				if seen[id] {
					e.t.Fatalf("MessageId %q returned twice", id)
				}
				seen[id] = true
			}
		}},
		{"SizeLimitIsExactlyMaximumMessageSize", func(e *env) {
			e.create("q", nil)
			e.sendBody("q", strings.Repeat("a", tidemq.MaxMessageSize))
			_, err := e.trySend("q", tidemq.SendEntry{Body: strings.Repeat("a", tidemq.MaxMessageSize+1)})
			e.wantCode(err, tidemq.ErrInvalidParameterValue, "body of MaximumMessageSize+1 bytes")
			// Multi-byte characters count in bytes.
			_, err = e.trySend("q", tidemq.SendEntry{Body: strings.Repeat("é", tidemq.MaxMessageSize/2) + "a"})
			e.wantCode(err, tidemq.ErrInvalidParameterValue, "body of MaximumMessageSize+1 bytes in 2-byte characters")
			// Attribute names, types and values count too.
			attrs := map[string]tidemq.MessageAttributeValue{"a": {DataType: "String", StringValue: "xyz"}} // 1+6+3 bytes
			e.send("q", tidemq.SendEntry{Body: strings.Repeat("b", tidemq.MaxMessageSize-10), Attributes: attrs})
			_, err = e.trySend("q", tidemq.SendEntry{Body: strings.Repeat("b", tidemq.MaxMessageSize-9), Attributes: attrs})
			e.wantCode(err, tidemq.ErrInvalidParameterValue, "body plus attributes of MaximumMessageSize+1 bytes")
			m := e.receive("q", 10)
			if len(m) != 2 {
				e.t.Fatalf("received %d messages, want the 2 that fit", len(m))
			}
			for _, msg := range m {
				if len(msg.Body) != tidemq.MaxMessageSize && len(msg.Body) != tidemq.MaxMessageSize-10 {
					e.t.Fatalf("received a body of %d bytes", len(msg.Body))
				}
			}
		}},
		{"SizeLimitFollowsTheQueueAttribute", func(e *env) {
			e.create("q", map[string]string{tidemq.AttrMaximumMessageSize: "1024"})
			e.sendBody("q", strings.Repeat("a", 1024))
			_, err := e.trySend("q", tidemq.SendEntry{Body: strings.Repeat("a", 1025)})
			e.wantCode(err, tidemq.ErrInvalidParameterValue, "body of 1025 bytes with MaximumMessageSize 1024")
		}},
		{"InvalidCharactersAreInvalidMessageContents", func(e *env) {
			e.create("q", nil)
			for _, body := range []string{"nul\x00", "bell\x07", "\x1f", "bad utf8 \xff\xfe", "non-character \ufffe", "\uffff"} {
				_, err := e.trySend("q", tidemq.SendEntry{Body: body})
				e.wantCode(err, tidemq.ErrInvalidMessageContents, "body %q", body)
			}
			_, err := e.trySend("q", tidemq.SendEntry{Body: ""})
			e.wantCode(err, tidemq.ErrMissingParameter, "empty body")
			e.wantCounts("q", 0, 0, 0, "after refused sends")
		}},
		{"MessageAttributesRoundTrip", func(e *env) {
			e.create("q", nil)
			attrs := map[string]tidemq.MessageAttributeValue{
				"str":          {DataType: "String", StringValue: "héllo"},
				"num":          {DataType: "Number", StringValue: "-12.5e3"},
				"int":          {DataType: "Number.int", StringValue: "42"},
				"bin":          {DataType: "Binary", BinaryValue: []byte{0, 1, 2, 0xfe, 0xff}},
				"gif":          {DataType: "Binary.gif", BinaryValue: []byte("GIF89a")},
				"custom":       {DataType: "String.custom-type_1", StringValue: "x"},
				"dotted.name_": {DataType: "String", StringValue: "y"},
			}
			e.send("q", tidemq.SendEntry{Body: "with attributes", Attributes: attrs})
			m := e.receiveOne("q")
			wantAttributes(e, m.Attributes, attrs, "received")
			if len(m.SystemAttributes) != 0 {
				e.t.Fatalf("message sent without system attributes has %v", m.SystemAttributes)
			}
		}},
		{"MessageAttributeValidation", func(e *env) {
			e.create("q", nil)
			s := func(v string) tidemq.MessageAttributeValue {
				return tidemq.MessageAttributeValue{DataType: "String", StringValue: v}
			}
			bad := []map[string]tidemq.MessageAttributeValue{
				{"AWS.reserved": s("x")},
				{"amazon.reserved": s("x")},
				{".leading": s("x")},
				{"trailing.": s("x")},
				{"dou..ble": s("x")},
				{"sp ace": s("x")},
				{strings.Repeat("n", 257): s("x")},
				{"empty": s("")},
				{"notype": {StringValue: "x"}},
				{"badtype": {DataType: "Integer", StringValue: "1"}},
				{"emptycustom": {DataType: "String.", StringValue: "1"}},
				{"nan": {DataType: "Number", StringValue: "abc"}},
				{"nobin": {DataType: "Binary"}},
				{"ctl": s("a\x01b")},
			}
			eleven := map[string]tidemq.MessageAttributeValue{}
			for i := 0; i < 11; i++ {
				eleven[fmt.Sprintf("a%d", i)] = s("v")
			}
			bad = append(bad, eleven)
			for _, attrs := range bad {
				_, err := e.trySend("q", tidemq.SendEntry{Body: "x", Attributes: attrs})
				e.wantCode(err, tidemq.ErrInvalidParameterValue, "message attributes %v", attrs)
			}
			ten := map[string]tidemq.MessageAttributeValue{}
			for i := 0; i < 10; i++ {
				ten[fmt.Sprintf("a%d", i)] = s("v")
			}
			e.send("q", tidemq.SendEntry{Body: "ten attributes", Attributes: ten})
			e.wantCounts("q", 1, 0, 0, "after one good and many refused sends")
		}},
		{"AccentedLatinAttributeNames", func(e *env) {
			// SQS accepts accented Latin letters in attribute names
			// ("attr.1øßä", AWS-validated); punctuation stays refused.
			e.create("q", nil)
			attrs := map[string]tidemq.MessageAttributeValue{
				"attr.1øßä": {DataType: "String", StringValue: "Valida"},
				"Größe":     {DataType: "Number", StringValue: "3"},
				"ÀÿĀſ":      {DataType: "String", StringValue: "range ends"},
			}
			e.send("q", tidemq.SendEntry{Body: "accented names", Attributes: attrs})
			wantAttributes(e, e.receiveOne("q").Attributes, attrs, "received")
			for _, name := range []string{"Invalid-§-attr", "a×b", "a÷b", "Invalid-!-attr", "emoji-😀"} {
				_, err := e.trySend("q", tidemq.SendEntry{Body: "x", Attributes: map[string]tidemq.MessageAttributeValue{
					name: {DataType: "String", StringValue: "v"}}})
				e.wantCode(err, tidemq.ErrInvalidParameterValue, "attribute name %q", name)
			}
		}},
		{"EmptyStringAttributeValueMessage", func(e *env) {
			e.create("q", nil)
			_, err := e.trySend("q", tidemq.SendEntry{Body: "x", Attributes: map[string]tidemq.MessageAttributeValue{
				"ErrorDetails": {DataType: "String", StringValue: ""}}})
			e.wantExact(err, tidemq.ErrInvalidParameterValue,
				"Message (user) attribute 'ErrorDetails' must contain a non-empty value of type 'String'.", "an empty String attribute")
		}},
		{"AWSTraceHeaderRoundTrip", func(e *env) {
			e.create("q", nil)
			trace := map[string]tidemq.MessageAttributeValue{"AWSTraceHeader": {DataType: "String",
				StringValue: "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"}}
			e.send("q", tidemq.SendEntry{Body: "traced", SystemAttributes: trace})
			m := e.receiveOne("q")
			wantAttributes(e, m.SystemAttributes, trace, "system attributes")
			if len(m.Attributes) != 0 {
				e.t.Fatalf("AWSTraceHeader leaked into the message attributes: %v", m.Attributes)
			}
			_, err := e.trySend("q", tidemq.SendEntry{Body: "x", SystemAttributes: map[string]tidemq.MessageAttributeValue{
				"SenderId": {DataType: "String", StringValue: "me"}}})
			e.wantCode(err, tidemq.ErrInvalidParameterValue, "system attribute other than AWSTraceHeader")
		}},
		{"SystemAttributesDoNotCountTowardsSize", func(e *env) {
			e.create("q", map[string]string{tidemq.AttrMaximumMessageSize: "1024"})
			header := "Root=1-5759e988-bd862e3fe1be46a994272793;Pad="
			header += strings.Repeat("t", tidemq.MaxTraceHeaderBytes-len(header))
			trace := map[string]tidemq.MessageAttributeValue{"AWSTraceHeader": {DataType: "String", StringValue: header}}
			e.send("q", tidemq.SendEntry{Body: strings.Repeat("a", 1024), SystemAttributes: trace})
		}},
		{"AWSTraceHeaderFormatAndSize", func(e *env) {
			e.create("q", nil)
			for _, bad := range []string{
				strings.Repeat("t", 500),
				"Root=1-5759e988-bd862e3fe1be46a994272793;Pad=" + strings.Repeat("t", tidemq.MaxTraceHeaderBytes),
				"Root=dummy;Parent=53995c3f42cd8ad8;Sampled=0",
				"Parent=53995c3f42cd8ad8;Sampled=1",
				"1-5759e988-bd862e3fe1be46a994272793",
				"Root=1-5759e988-bd862e3fe1be46a994272793;Service=café",
			} {
				_, err := e.trySend("q", tidemq.SendEntry{Body: "x", SystemAttributes: map[string]tidemq.MessageAttributeValue{
					"AWSTraceHeader": {DataType: "String", StringValue: bad}}})
				e.wantCode(err, tidemq.ErrInvalidParameterValue, "AWSTraceHeader %.40q", bad)
			}
			for _, good := range []string{
				"Root=1-5759e988-bd862e3fe1be46a994272793",
				"Root=1-abc-def",
				"Root=1-5759e988-bd862e3fe1be46a994272793; Parent=53995c3f42cd8ad8; Sampled=?;Lineage=a87bd80c:1|68fd508a:5",
			} {
				e.send("q", tidemq.SendEntry{Body: "x", SystemAttributes: map[string]tidemq.MessageAttributeValue{
					"AWSTraceHeader": {DataType: "String", StringValue: good}}})
			}
			e.wantCounts("q", 3, 0, 0, "after the good and the refused trace headers")
		}},
		{"MaxNumberOfMessages", func(e *env) {
			e.create("q", nil)
			for i := 0; i < 15; i++ {
				e.sendBody("q", fmt.Sprintf("m%02d", i))
			}
			if m := e.receive("q", 0); len(m) != 1 {
				e.t.Fatalf("MaxNumberOfMessages left out (default 1) returned %d messages", len(m))
			}
			first := e.receive("q", 10)
			if len(first) != 10 {
				e.t.Fatalf("MaxNumberOfMessages 10 with 14 visible returned %d messages", len(first))
			}
			rest := e.receive("q", 10)
			if len(rest) != 4 {
				e.t.Fatalf("second receive returned %d messages, want the remaining 4", len(rest))
			}
			seen := map[string]bool{}
			for _, m := range append(first, rest...) {
				if seen[m.MessageID] {
					e.t.Fatalf("message %s received twice", m.Body)
				}
				seen[m.MessageID] = true
			}
			for _, n := range []int{11, -1} {
				_, err := e.tryReceive("q", n)
				e.wantCode(err, tidemq.ErrInvalidParameterValue, "MaxNumberOfMessages %d", n)
			}
			// A 0 that the client gives is refused, unlike one left out.
			_, err := e.tryReceive("q", 1, withMax(0))
			e.wantMessage(err, tidemq.ErrInvalidParameterValue,
				"Value 0 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.", "MaxNumberOfMessages 0")
		}},
		{"ReceiveParameterRanges", func(e *env) {
			e.create("q", nil)
			_, err := e.tryReceive("q", 1, withWait(21))
			e.wantCode(err, tidemq.ErrInvalidParameterValue, "WaitTimeSeconds 21")
			_, err = e.tryReceive("q", 1, withWait(-1))
			e.wantCode(err, tidemq.ErrInvalidParameterValue, "WaitTimeSeconds -1")
			_, err = e.tryReceive("q", 1, withVisibility(43201))
			e.wantCode(err, tidemq.ErrInvalidParameterValue, "VisibilityTimeout 43201 on receive")
		}},
		{"SystemAttributesOfAReceivedMessage", func(e *env) {
			e.create("q", nil)
			sentAt := e.now()
			e.sendBody("q", "x")
			e.advance(3 * time.Second)
			firstAt := e.now()
			m := e.receiveOne("q", withVisibility(10))
			if m.SenderID == "" {
				e.t.Error("SenderID is empty")
			}
			if m.SentTimestamp.UnixMilli() != sentAt.UnixMilli() {
				e.t.Errorf("SentTimestamp = %v, want the send time %v", m.SentTimestamp, sentAt)
			}
			if m.ApproximateReceiveCount != 1 {
				e.t.Errorf("first receive: ApproximateReceiveCount = %d, want 1", m.ApproximateReceiveCount)
			}
			if m.FirstReceiveTimestamp.UnixMilli() != firstAt.UnixMilli() {
				e.t.Errorf("first receive: FirstReceiveTimestamp = %v, want %v", m.FirstReceiveTimestamp, firstAt)
			}
			e.advance(11 * time.Second)
			m2 := e.receiveOne("q")
			if m2.ApproximateReceiveCount != 2 {
				e.t.Errorf("second receive: ApproximateReceiveCount = %d, want 2", m2.ApproximateReceiveCount)
			}
			if m2.FirstReceiveTimestamp.UnixMilli() != firstAt.UnixMilli() {
				e.t.Errorf("second receive: FirstReceiveTimestamp = %v, want it unchanged at %v", m2.FirstReceiveTimestamp, firstAt)
			}
			if m2.SentTimestamp.UnixMilli() != sentAt.UnixMilli() || m2.SenderID != m.SenderID {
				e.t.Errorf("second receive changed SentTimestamp or SenderID: %v %q", m2.SentTimestamp, m2.SenderID)
			}
			if m2.DeadLetterQueueSourceARN != "" {
				e.t.Errorf("a message never dead-lettered has DeadLetterQueueSourceARN %q", m2.DeadLetterQueueSourceARN)
			}
		}},
		{"ReceiptHandleChangesOnEachReceive", func(e *env) {
			e.create("q", nil)
			e.sendBody("q", "x")
			seen := map[string]bool{}
			for i := 1; i <= 3; i++ {
				m := e.receiveOne("q")
				if m.ApproximateReceiveCount != i {
					e.t.Fatalf("receive %d: ApproximateReceiveCount = %d", i, m.ApproximateReceiveCount)
				}
				if seen[m.ReceiptHandle] {
					e.t.Fatalf("receive %d returned a receipt handle already used", i)
				}
				seen[m.ReceiptHandle] = true
				e.advance(31 * time.Second)
			}
		}},
		{"DeleteRemovesTheMessage", func(e *env) {
			e.create("q", nil)
			e.sendBody("q", "x")
			m := e.receiveOne("q", withVisibility(5))
			e.del("q", m.ReceiptHandle)
			e.wantCounts("q", 0, 0, 0, "after delete")
			e.advance(6 * time.Second)
			e.receiveNone("q", "after delete and the visibility timeout")
			// Deleting again with the same handle is not an error on a
			// standard queue.
			e.ok(e.tryDelete("q", m.ReceiptHandle), "second delete with the same handle")
		}},
		{"DeleteWithStaleHandleStillDeletes", func(e *env) {
			e.create("q", nil)
			e.sendBody("q", "x")
			old := e.receiveOne("q", withVisibility(5))
			e.advance(6 * time.Second)
			fresh := e.receiveOne("q", withVisibility(5))
			if fresh.ReceiptHandle == old.ReceiptHandle {
				e.t.Fatal("second receive returned the same receipt handle")
			}
			e.ok(e.tryDelete("q", old.ReceiptHandle), "delete with the stale handle on a standard queue")
			e.wantCounts("q", 0, 0, 0, "after delete with the stale handle")
			e.advance(6 * time.Second)
			e.receiveNone("q", "after delete with the stale handle")
		}},
		{"DeleteWithExpiredHandleStillDeletes", func(e *env) {
			e.create("q", nil)
			e.sendBody("q", "x")
			m := e.receiveOne("q", withVisibility(5))
			e.advance(6 * time.Second)
			e.ok(e.tryDelete("q", m.ReceiptHandle), "delete with an expired handle on a standard queue")
			e.wantCounts("q", 0, 0, 0, "after delete with the expired handle")
			e.receiveNone("q", "after delete with the expired handle")
		}},
		{"MalformedHandleIsReceiptHandleIsInvalid", func(e *env) {
			e.create("q", nil)
			e.sendBody("q", "x")
			e.receiveOne("q")
			for _, h := range []string{"garbage", "AQEB", "%%%", strings.Repeat("A", 2000)} {
				e.wantCode(e.tryDelete("q", h), tidemq.ErrReceiptHandleIsInvalid, "DeleteMessage(%.20q)", h)
				e.wantCode(e.tryChange("q", h, 10), tidemq.ErrReceiptHandleIsInvalid, "ChangeMessageVisibility(%.20q)", h)
			}
			e.wantCounts("q", 0, 1, 0, "after refused deletes")
		}},
		{"HandleFromAnotherQueueIsReceiptHandleIsInvalid", func(e *env) {
			e.create("a", nil)
			e.create("b", nil)
			e.sendBody("a", "x")
			e.sendBody("b", "y")
			m := e.receiveOne("a")
			e.receiveOne("b")
			e.wantCode(e.tryDelete("b", m.ReceiptHandle), tidemq.ErrReceiptHandleIsInvalid, "delete in b with a's handle")
			e.wantCode(e.tryChange("b", m.ReceiptHandle, 0), tidemq.ErrReceiptHandleIsInvalid, "change visibility in b with a's handle")
			e.wantCounts("a", 0, 1, 0, "queue a")
			e.wantCounts("b", 0, 1, 0, "queue b")
		}},
		{"MessageGroupIDAcceptedOnStandard", func(e *env) {
			e.create("q", nil)
			e.send("q", tidemq.SendEntry{Body: "tenant a", MessageGroupID: "tenant-a"})
			e.send("q", tidemq.SendEntry{Body: "tenant a again", MessageGroupID: "tenant-a"})
			// No FIFO ordering or group lock: both are delivered at once.
			m := e.receive("q", 10)
			if len(m) != 2 {
				e.t.Fatalf("received %d messages, want both messages of the group", len(m))
			}
			// The group id is kept and returned (SQS returns MessageGroupId
			// on a standard queue too).
			for _, msg := range m {
				if msg.MessageGroupID != "tenant-a" {
					e.t.Errorf("%q: MessageGroupId %q, want tenant-a", msg.Body, msg.MessageGroupID)
				}
			}
		}},
	}
}

// wantAttributes compares message attributes field by field.
func wantAttributes(e *env, got, want map[string]tidemq.MessageAttributeValue, what string) {
	e.t.Helper()
	if len(got) != len(want) {
		e.t.Fatalf("%s: got %d attributes %v, want %d %v", what, len(got), got, len(want), want)
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			e.t.Fatalf("%s: attribute %q missing", what, name)
		}
		if g.DataType != w.DataType || g.StringValue != w.StringValue || !bytes.Equal(g.BinaryValue, w.BinaryValue) {
			e.t.Fatalf("%s: attribute %q = %+v, want %+v", what, name, g, w)
		}
	}
}
