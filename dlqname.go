package tidemq

import (
	"regexp"
	"strings"
)

// dlqName matches the names teams give dead-letter queues: orders-dlq,
// loader_dlq, crm-sync-dlq.fifo, OrdersDLQ, orders-dead-letter-queue,
// OrdersDeadLetterQueue, dlq-orders. The ".fifo" suffix is removed first.
var dlqName = regexp.MustCompile(
	`(?:^|[-_])(?i:dlq|dead[-_]?letters?(?:[-_]?queue)?)$` + // orders-dlq, orders_dead_letter_queue, dlq
		`|[a-z0-9](?:DLQ|DeadLetters?(?:Queue)?)$` + // OrdersDLQ, OrdersDeadLetterQueue
		`|^(?i:dlq|dead[-_]?letters?)[-_]`) // dlq-orders

// NamedLikeDeadLetterQueue reports whether a queue's name says it is a
// dead-letter queue: ignoring a ".fifo" suffix, it ends in "dlq" or
// "dead-letter" ("deadletter", "dead_letter", with or without "queue")
// after a '-' or '_' (any case) or in CamelCase ("OrdersDLQ"), or starts
// with "dlq-" or "dlq_".
//
// A queue is a dead-letter queue, for tidemq's listings, metrics and
// alarms, when some queue's RedrivePolicy names it (SQS's own definition),
// when it holds messages that were dead-lettered into it, or when it is
// named like one. The last two keep a dead-letter queue in view after its
// source queue was deleted (as per-batch queues are), which SQS's
// definition alone would not. SQS itself (StartMessageMoveTask) goes on
// using only its own definition.
func NamedLikeDeadLetterQueue(name string) bool {
	// Most names have neither word: answer them without the regexp (a
	// snapshot of 100,000 queues asks for each).
	if !containsFold(name, "dlq") && !containsFold(name, "dead") {
		return false
	}
	return dlqName.MatchString(strings.TrimSuffix(name, ".fifo"))
}

// containsFold reports whether s contains the lower-case ASCII word w in
// any case.
func containsFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		j := 0
		for j < len(w) && s[i+j]|0x20 == w[j] {
			j++
		}
		if j == len(w) {
			return true
		}
	}
	return false
}
