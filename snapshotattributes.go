package tidemq

import (
	"encoding/json"
	"strconv"
	"strings"
)

// SnapshotOfAttributes is the snapshot a client can make of the queue at
// url from its GetQueueAttributes (All) answer, against any SQS endpoint:
// depths, retention, FIFO and the RedrivePolicy's target and count. What
// the attributes do not tell (the oldest message's age, counters, whether
// the queue is a dead-letter queue) is left zero; tidemq top and tidemq dlq
// both read plain SQS with it.
func SnapshotOfAttributes(url string, a map[string]string) QueueSnapshot {
	n := func(k string) int { v, _ := strconv.Atoi(a[k]); return v }
	s := QueueSnapshot{
		Name: url[strings.LastIndexByte(url, '/')+1:], ARN: a["QueueArn"], FIFO: a["FifoQueue"] == "true",
		Visible: n("ApproximateNumberOfMessages"), InFlight: n("ApproximateNumberOfMessagesNotVisible"),
		Delayed: n("ApproximateNumberOfMessagesDelayed"), RetentionSeconds: n("MessageRetentionPeriod"),
	}
	if rp := a["RedrivePolicy"]; rp != "" {
		var p struct {
			DeadLetterTargetArn string          `json:"deadLetterTargetArn"`
			MaxReceiveCount     json.RawMessage `json:"maxReceiveCount"`
		}
		if json.Unmarshal([]byte(rp), &p) == nil {
			s.DeadLetterTarget = p.DeadLetterTargetArn
			s.MaxReceiveCount, _ = jsonInt(p.MaxReceiveCount)
		}
	}
	return s
}
