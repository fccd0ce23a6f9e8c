package tidemq

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestNewClientInfoBounds(t *testing.T) {
	long := strings.Repeat("a", MaxClientUserAgentBytes-1)
	tests := []struct {
		name, in, want string
	}{
		{"short, kept", "aws-cli/2.15", "aws-cli/2.15"},
		{"at the bound, kept", long + "b", long + "b"},
		{"cut at the bound", long + "bc", long + "b"},
		{"a 3-byte rune over the bound is left out whole", long + "€", long},
		{"a 4-byte rune over the bound is left out whole", long[:MaxClientUserAgentBytes-3] + "😀", long[:MaxClientUserAgentBytes-3]},
		{"a stray continuation byte is left out with the rune it would split", long + "\x80\x80", long[:MaxClientUserAgentBytes-2]},
		{"bytes that are no UTF-8 at all are cut at the bound", long[:252] + strings.Repeat("\x80", 8), long[:252] + strings.Repeat("\x80", 4)},
	}
	for _, tt := range tests {
		if got := NewClientInfo("", tt.in, "").UserAgent; got != tt.want {
			t.Errorf("%s: got %q (%d bytes), want %d bytes", tt.name, got, len(got), len(tt.want))
		}
	}
	c := NewClientInfo(strings.Repeat("1", 1000), "", strings.Repeat("K", 1000))
	if len(c.Addr) != MaxClientAddrBytes || len(c.AccessKey) != MaxAccessKeyIDLength {
		t.Errorf("Addr %d bytes, AccessKey %d bytes", len(c.Addr), len(c.AccessKey))
	}
}

func TestAppendHistoryKeepsTheSendAndDropsTheOldestAfterIt(t *testing.T) {
	var h []HistoryEvent
	for i := 0; i < MaxHistoryEvents+3; i++ {
		h = AppendHistory(h, HistoryEvent{Detail: strconv.Itoa(i)})
	}
	if len(h) != MaxHistoryEvents {
		t.Fatalf("len = %d, want %d", len(h), MaxHistoryEvents)
	}
	if h[0].Detail != "0" || h[1].Detail != "4" || h[len(h)-1].Detail != strconv.Itoa(MaxHistoryEvents+2) {
		t.Fatalf("kept %q, %q ... %q; want 0, 4 ... %d", h[0].Detail, h[1].Detail, h[len(h)-1].Detail, MaxHistoryEvents+2)
	}
}

func TestStoryPutsTheSendFirst(t *testing.T) {
	sent := time.Unix(1700000000, 0)
	got := Story(nil, "q", sent, "AKID")
	want := []HistoryEvent{{Time: sent, Kind: HistorySent, Queue: "q", Client: ClientInfo{AccessKey: "AKID"}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("no history: %+v, want %+v", got, want)
	}
	// A message moved to a dead-letter queue was sent to the queue of its
	// first recorded event, not the one it is in now.
	history := []HistoryEvent{{Kind: HistoryReceived, Queue: "src"}, {Kind: HistoryDeadLetter, Queue: "src"}}
	got = Story(history, "dlq", sent, "AKID")
	if len(got) != 3 || got[0].Queue != "src" || got[0].Kind != HistorySent || got[1].Kind != HistoryReceived || got[2].Kind != HistoryDeadLetter {
		t.Fatalf("moved message: %+v", got)
	}
}
