package engine

import "github.com/tidemq/tidemq"

// isBatch tells the batch form of an action from the single form: the
// single actions pass one entry without an Id.
func isBatch(n int, firstID string) bool { return n != 1 || firstID != "" }

// checkBatch applies the rules every batch request must meet before any
// entry is looked at: 1 to 10 entries with distinct, well-formed Ids.
func checkBatch(n int, id func(i int) string) error {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = id(i)
	}
	return tidemq.ValidateBatchEntryIDs(ids)
}

// checkSendBatch adds SendMessageBatch's limit on the total payload.
func checkSendBatch(entries []tidemq.SendEntry) error {
	if err := checkBatch(len(entries), func(i int) string { return entries[i].ID }); err != nil {
		return err
	}
	total := 0
	for _, en := range entries {
		total += tidemq.MessageSize(en.Body, en.Attributes)
	}
	if total > tidemq.MaxMessageSize {
		return tidemq.Errorf(tidemq.ErrBatchRequestTooLong, "Batch requests cannot be longer than %d bytes. You have sent %d bytes.", tidemq.MaxMessageSize, total)
	}
	return nil
}
