package brokertest

import (
	"fmt"
	"strings"
	"time"

	"github.com/tidemq/tidemq"
)

// batchChecks cover the batch forms of send, delete and visibility change:
// which problems fail the request and which only an entry (reference §1,
// BatchResultErrorEntry, and §4 batch limits).
func batchChecks() []check {
	return []check{
		{"SendBatchReportsPerEntryErrors", func(e *env) {
			e.create("q", nil)
			res, err := e.trySendBatch("q",
				tidemq.SendEntry{ID: "ok1", Body: "first"},
				tidemq.SendEntry{ID: "badchars", Body: "bad\x00"},
				tidemq.SendEntry{ID: "large", Body: strings.Repeat("x", 600_000)},
				tidemq.SendEntry{ID: "badattr", Body: "x", Attributes: map[string]tidemq.MessageAttributeValue{"AWS.x": {DataType: "String", StringValue: "v"}}},
				tidemq.SendEntry{ID: "ok2", Body: "second"},
			)
			e.ok(err, "SendMessageBatch with some bad entries")
			if len(res) != 5 {
				e.t.Fatalf("SendMessageBatch returned %d results for 5 entries", len(res))
			}
			byID := map[string]tidemq.SendResult{}
			for _, r := range res {
				byID[r.ID] = r
			}
			for _, id := range []string{"ok1", "large", "ok2"} {
				if r := byID[id]; r.Err != nil || r.MessageID == "" {
					e.t.Fatalf("entry %s: MessageId %q, %s", id, r.MessageID, describe(r.Err))
				}
			}
			e.wantCode(byID["badchars"].Err, tidemq.ErrInvalidMessageContents, "entry with a NUL character")
			e.wantCode(byID["badattr"].Err, tidemq.ErrInvalidParameterValue, "entry with an AWS. attribute")
			if byID["badchars"].MessageID != "" {
				e.t.Fatal("a failed entry has a MessageId")
			}
			if got := sortedBodies(e.receive("q", 10)); len(got) != 3 || got[0] != "first" || got[1] != "second" {
				e.t.Fatalf("after the batch the queue holds %d messages, want first, second and the 600 kB one", len(got))
			}
		}},
		{"SendBatchOverSizeEntryFailsOnlyThatEntry", func(e *env) {
			e.create("q", map[string]string{tidemq.AttrMaximumMessageSize: "1024"})
			res, err := e.trySendBatch("q",
				tidemq.SendEntry{ID: "small", Body: "x"},
				tidemq.SendEntry{ID: "large", Body: strings.Repeat("x", 1025)},
			)
			e.ok(err, "SendMessageBatch")
			if len(res) != 2 || res[0].ID != "small" || res[0].Err != nil || res[1].ID != "large" {
				e.t.Fatalf("SendMessageBatch results %+v", res)
			}
			e.wantCode(res[1].Err, tidemq.ErrInvalidParameterValue, "entry over MaximumMessageSize")
			e.wantCounts("q", 1, 0, 0, "after the batch")
		}},
		{"SendBatchRequestErrors", func(e *env) {
			e.create("q", nil)
			entries := func(n int) []tidemq.SendEntry {
				var out []tidemq.SendEntry
				for i := 0; i < n; i++ {
					out = append(out, tidemq.SendEntry{ID: fmt.Sprintf("e%d", i), Body: "x"})
				}
				return out
			}
			_, err := e.trySendBatch("q")
			e.wantCode(err, tidemq.ErrEmptyBatchRequest, "SendMessageBatch without entries")
			_, err = e.trySendBatch("q", entries(11)...)
			e.wantCode(err, tidemq.ErrTooManyEntriesInBatchRequest, "SendMessageBatch with 11 entries")
			_, err = e.trySendBatch("q", tidemq.SendEntry{ID: "same", Body: "a"}, tidemq.SendEntry{ID: "same", Body: "b"})
			e.wantCode(err, tidemq.ErrBatchEntryIdsNotDistinct, "SendMessageBatch with repeated Ids")
			for _, id := range []string{"", "has space", "dot.ted", strings.Repeat("i", 81)} {
				_, err = e.trySendBatch("q", tidemq.SendEntry{ID: id, Body: "a"})
				e.wantCode(err, tidemq.ErrInvalidBatchEntryID, "SendMessageBatch with Id %q", id)
			}
			half := strings.Repeat("h", 600_000)
			_, err = e.trySendBatch("q", tidemq.SendEntry{ID: "a", Body: half}, tidemq.SendEntry{ID: "b", Body: half})
			e.wantCode(err, tidemq.ErrBatchRequestTooLong, "SendMessageBatch of 1.2 MB")
			e.wantCounts("q", 0, 0, 0, "after refused batches")
			res, err := e.trySendBatch("q", entries(10)...)
			e.ok(err, "SendMessageBatch with 10 entries")
			for i, r := range res {
				if r.Err != nil || r.ID != fmt.Sprintf("e%d", i) {
					e.t.Fatalf("result %d of a good batch: %+v", i, r)
				}
			}
			e.wantCounts("q", 10, 0, 0, "after a batch of 10")
		}},
		{"DeleteBatchReportsPerEntryErrors", func(e *env) {
			e.create("q", nil)
			e.create("other", nil)
			e.sendBody("q", "a")
			e.sendBody("q", "b")
			e.sendBody("other", "c")
			m := e.receive("q", 10)
			o := e.receiveOne("other")
			if len(m) != 2 {
				e.t.Fatalf("received %d messages, want 2", len(m))
			}
			res, err := e.b.DeleteMessages(e.ctx, tidemq.DeleteMessagesParams{Queue: "q", Batch: true, Entries: []tidemq.DeleteEntry{
				{ID: "a", ReceiptHandle: m[0].ReceiptHandle},
				{ID: "bad", ReceiptHandle: "garbage"},
				{ID: "foreign", ReceiptHandle: o.ReceiptHandle},
				{ID: "b", ReceiptHandle: m[1].ReceiptHandle},
			}})
			e.ok(err, "DeleteMessageBatch")
			if len(res) != 4 {
				e.t.Fatalf("DeleteMessageBatch returned %d results for 4 entries", len(res))
			}
			e.ok(res[0], "entry a")
			e.wantCode(res[1], tidemq.ErrReceiptHandleIsInvalid, "entry with a malformed handle")
			e.wantCode(res[2], tidemq.ErrReceiptHandleIsInvalid, "entry with another queue's handle")
			e.ok(res[3], "entry b")
			e.wantCounts("q", 0, 0, 0, "after the batch delete")
			e.wantCounts("other", 0, 1, 0, "the other queue")
		}},
		{"DeleteAndChangeBatchRequestErrors", func(e *env) {
			e.create("q", nil)
			e.sendBody("q", "a")
			h := e.receiveOne("q").ReceiptHandle
			del := func(entries ...tidemq.DeleteEntry) error {
				_, err := e.b.DeleteMessages(e.ctx, tidemq.DeleteMessagesParams{Queue: "q", Entries: entries, Batch: true})
				return err
			}
			chg := func(entries ...tidemq.ChangeVisibilityEntry) error {
				_, err := e.b.ChangeMessageVisibility(e.ctx, tidemq.ChangeVisibilityParams{Queue: "q", Entries: entries, Batch: true})
				return err
			}
			var dels []tidemq.DeleteEntry
			var chgs []tidemq.ChangeVisibilityEntry
			for i := 0; i < 11; i++ {
				dels = append(dels, tidemq.DeleteEntry{ID: fmt.Sprintf("d%d", i), ReceiptHandle: h})
				chgs = append(chgs, tidemq.ChangeVisibilityEntry{ID: fmt.Sprintf("c%d", i), ReceiptHandle: h, VisibilityTimeout: intp(10)})
			}
			e.wantCode(del(), tidemq.ErrEmptyBatchRequest, "DeleteMessageBatch without entries")
			e.wantCode(del(dels...), tidemq.ErrTooManyEntriesInBatchRequest, "DeleteMessageBatch with 11 entries")
			e.wantCode(del(tidemq.DeleteEntry{ID: "x", ReceiptHandle: h}, tidemq.DeleteEntry{ID: "x", ReceiptHandle: h}),
				tidemq.ErrBatchEntryIdsNotDistinct, "DeleteMessageBatch with repeated Ids")
			e.wantCode(del(tidemq.DeleteEntry{ID: "bad id", ReceiptHandle: h}), tidemq.ErrInvalidBatchEntryID, "DeleteMessageBatch with Id 'bad id'")
			e.wantCode(chg(), tidemq.ErrEmptyBatchRequest, "ChangeMessageVisibilityBatch without entries")
			e.wantCode(chg(chgs...), tidemq.ErrTooManyEntriesInBatchRequest, "ChangeMessageVisibilityBatch with 11 entries")
			e.wantCode(chg(tidemq.ChangeVisibilityEntry{ID: "x", ReceiptHandle: h}, tidemq.ChangeVisibilityEntry{ID: "x", ReceiptHandle: h}),
				tidemq.ErrBatchEntryIdsNotDistinct, "ChangeMessageVisibilityBatch with repeated Ids")
			e.wantCounts("q", 0, 1, 0, "after refused batches")
		}},
		{"ChangeVisibilityBatchReportsPerEntryErrors", func(e *env) {
			e.create("q", nil)
			e.create("other", nil)
			e.sendBody("q", "a")
			e.sendBody("q", "b")
			e.sendBody("other", "c")
			m := e.receive("q", 10)
			o := e.receiveOne("other")
			if len(m) != 2 {
				e.t.Fatalf("received %d messages, want 2", len(m))
			}
			res, err := e.b.ChangeMessageVisibility(e.ctx, tidemq.ChangeVisibilityParams{Queue: "q", Batch: true, Entries: []tidemq.ChangeVisibilityEntry{
				{ID: "a", ReceiptHandle: m[0].ReceiptHandle, VisibilityTimeout: intp(0)},
				{ID: "bad", ReceiptHandle: "garbage", VisibilityTimeout: intp(0)},
				{ID: "foreign", ReceiptHandle: o.ReceiptHandle, VisibilityTimeout: intp(0)},
				{ID: "b", ReceiptHandle: m[1].ReceiptHandle, VisibilityTimeout: intp(100)},
			}})
			e.ok(err, "ChangeMessageVisibilityBatch")
			if len(res) != 4 {
				e.t.Fatalf("ChangeMessageVisibilityBatch returned %d results for 4 entries", len(res))
			}
			e.ok(res[0], "entry a")
			e.wantCode(res[1], tidemq.ErrReceiptHandleIsInvalid, "entry with a malformed handle")
			e.wantCode(res[2], tidemq.ErrReceiptHandleIsInvalid, "entry with another queue's handle")
			e.ok(res[3], "entry b")
			// a is visible at once, b hidden for 100 s, c untouched.
			got := e.receive("q", 10)
			if len(got) != 1 || got[0].MessageID != m[0].MessageID {
				e.t.Fatalf("after the batch change, receive returned %v, want only a", bodies(got))
			}
			e.del("q", got[0].ReceiptHandle)
			e.advance(99 * time.Second)
			e.receiveNone("q", "99 s after b's change to 100 s")
			e.wantCounts("other", 1, 0, 0, "the other queue after its message's 30 s visibility")
			e.advance(2 * time.Second)
			if got := e.receive("q", 10); len(got) != 1 || got[0].MessageID != m[1].MessageID {
				e.t.Fatalf("101 s after b's change, receive returned %v, want b", bodies(got))
			}
		}},
	}
}
