package trigger

import "fmt"

// FIFOBatchOrderRisk says what happens to the order of a FIFO message group
// when a message of a batch fails, for an event source that takes batches
// of batch messages (reportsFailures: with ReportBatchItemFailures), or ""
// when there is no risk (a batch of one).
//
// Lambda hands a batch's messages to the handler in group order. When one
// fails, a handler that goes on with the rest processes the later messages
// of its group before it: with ReportBatchItemFailures they are deleted and
// the failed one comes back alone, after them; without it the whole batch
// comes back and the later ones are processed a second time, after it. AWS
// behaves so too; only the handler can keep the order, by stopping at the
// first failure and listing it and every message after it in
// batchItemFailures. 'tidemq lint' (TQ018) and 'tidemq trigger create'
// both say so, in these words.
func FIFOBatchOrderRisk(batch int, reportsFailures bool) string {
	if batch <= 1 {
		return ""
	}
	if !reportsFailures {
		return fmt.Sprintf("FIFO batches of up to %d without ReportBatchItemFailures: when one message fails the whole batch comes back, so the later messages of its group, already processed, are processed again after it; "+
			"declare ReportBatchItemFailures and have the handler stop at the first failure and list it and every later message in batchItemFailures (or use BatchSize 1)", batch)
	}
	return fmt.Sprintf("FIFO batches of up to %d: a handler that goes on after a failed message processes the later messages of its group before it (they are deleted, the failed one comes back after them); "+
		"the handler must stop at the first failure and list it and every later message in batchItemFailures (or use BatchSize 1)", batch)
}
