package trigger

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// parseItemFailures reads a function's response under
// ReportBatchItemFailures. It returns the message ids to keep (nil: delete
// the whole batch) or an error when the response is invalid, which fails
// the whole batch. inBatch reports whether an id was in the batch.
//
// A complete success is an empty or null response, {} and an empty or null
// batchItemFailures. Invalid are: JSON that does not parse, a response that
// is not an object, batchItemFailures that is not a list, an entry that is
// not an object, an itemIdentifier that is missing (a wrongly named key),
// null, not a string or empty, and an id that was not in the batch.
func parseItemFailures(resp []byte, inBatch func(string) bool) ([]string, error) {
	resp = bytes.TrimSpace(resp)
	if len(resp) == 0 || string(resp) == "null" {
		return nil, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(resp, &top); err != nil {
		return nil, fmt.Errorf("the response is not a JSON object: %v", err)
	}
	raw, ok := top["batchItemFailures"]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	var items []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("batchItemFailures is not a list of objects: %v", err)
	}
	ids := make([]string, 0, len(items))
	for i, item := range items {
		rawID, ok := item["itemIdentifier"]
		if !ok {
			return nil, fmt.Errorf("batchItemFailures[%d] has no itemIdentifier", i)
		}
		var id *string
		if err := json.Unmarshal(rawID, &id); err != nil {
			return nil, fmt.Errorf("batchItemFailures[%d].itemIdentifier is not a string", i)
		}
		if id == nil || *id == "" {
			return nil, fmt.Errorf("batchItemFailures[%d].itemIdentifier is empty or null", i)
		}
		if !inBatch(*id) {
			return nil, fmt.Errorf("batchItemFailures[%d].itemIdentifier %q is not a message of the batch", i, *id)
		}
		ids = append(ids, *id)
	}
	return ids, nil
}
