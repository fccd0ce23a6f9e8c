package tidemq

import (
	"testing"
	"time"
)

func TestStoredMessageSnapshot(t *testing.T) {
	sent := time.Unix(100, 5)
	m := &StoredMessage{ID: "id", Body: "b", Group: "g", DedupID: "d", Sender: "AKID", Sent: StampOf(sent), ReceiveCount: 2,
		History: []HistoryEvent{{Kind: HistoryReceived, Queue: "src"}}}
	s := m.Snapshot("q", true, 7, "h")
	if s.MessageID != "id" || s.ReceiptHandle != "h" || !s.SentTimestamp.Equal(sent) || s.ApproximateReceiveCount != 2 ||
		s.SequenceNumber != FormatSequenceNumber(7) || s.MessageDeduplicationID != "d" || !s.FirstReceiveTimestamp.IsZero() {
		t.Fatalf("FIFO snapshot: %+v", s)
	}
	if len(s.History) != 2 || s.History[0].Kind != HistorySent || s.History[0].Queue != "src" || s.History[0].Client.AccessKey != "AKID" {
		t.Fatalf("story: %+v, want the send (in src, by AKID) first", s.History)
	}
	if s := m.Snapshot("q", false, 7, ""); s.SequenceNumber != "" || s.MessageDeduplicationID != "" || s.MessageGroupID != "g" {
		t.Fatalf("standard snapshot shows %q %q, group %q", s.SequenceNumber, s.MessageDeduplicationID, s.MessageGroupID)
	}
}

func TestStoredMessageMoved(t *testing.T) {
	m := &StoredMessage{ID: "id", ReceiveCount: 3, FirstReceive: 1, ReceivedAt: 2, VisibleAt: 50, Enqueued: 1,
		History: make([]HistoryEvent, 1, 8)}
	dl := m.Moved(MoveRuleOf(HistoryDeadLetter, "arn:src", false), 9, HistoryEvent{Kind: HistoryDeadLetter})
	if dl.DLQSource != "arn:src" || dl.ReceiveCount != 3 || dl.Enqueued != 1 || dl.VisibleAt != 0 || len(dl.History) != 2 {
		t.Fatalf("dead-lettered: %+v", dl)
	}
	if len(m.History) != 1 || m.VisibleAt != 50 {
		t.Fatalf("the source record changed: %+v", m)
	}
	dl.History[0].Kind = "changed"
	if m.History[0].Kind == "changed" {
		t.Fatal("the moved copy shares its history's array with the source")
	}
	back := dl.Moved(MoveRuleOf(HistoryMoved, "arn:dlq", false), 10, HistoryEvent{Kind: HistoryMoved})
	if back.DLQSource != "" || back.ReceiveCount != 0 || back.FirstReceive != 0 || back.Enqueued != 10 || len(back.History) != 3 {
		t.Fatalf("redriven: %+v", back)
	}
}

func TestStoredMessageReceived(t *testing.T) {
	var m StoredMessage
	t1, t2 := time.Unix(100, 0), time.Unix(200, 0)
	m.Received("q", ClientInfo{AccessKey: "A"}, 30*time.Second, t1)
	m.Received("q", ClientInfo{AccessKey: "B"}, time.Minute, t2)
	if m.ReceiveCount != 2 || m.FirstReceive != StampOf(t1) || m.ReceivedAt != StampOf(t2) || m.VisibleAt != StampOf(t2.Add(time.Minute)) {
		t.Fatalf("after two receives: %+v", m)
	}
	if len(m.History) != 2 || m.History[1].Kind != HistoryReceived || m.History[1].Client.AccessKey != "B" ||
		m.History[1].Detail != "receive 2, visibility timeout 1m0s" {
		t.Fatalf("story: %+v", m.History)
	}
}
