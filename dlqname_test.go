package tidemq_test

import (
	"testing"

	"github.com/tidemq/tidemq"
)

func TestNamedLikeDeadLetterQueue(t *testing.T) {
	for name, want := range map[string]bool{
		"orders-dlq": true, "orders_dlq": true, "orders-DLQ": true, "dlq": true, "DLQ": true,
		"morpheus-sam-crm-sync-dlq.fifo": true, "stack_doc_loader_1001_7_dlq": true,
		"OrdersDLQ": true, "OrdersDeadLetterQueue": true, "orders-dead-letter-queue": true,
		"orders_deadletter": true, "orders-dead-letters": true, "dlq-orders": true, "DLQ_orders": true,
		"orders": false, "ordersdlq": false, "dlqueue": false, "headlq": false, "orders.fifo": false,
		"dlq-": true, "deadline-orders": false, "orders-dlq-replay": false, "": false,
	} {
		if got := tidemq.NamedLikeDeadLetterQueue(name); got != want {
			t.Errorf("NamedLikeDeadLetterQueue(%q) = %v, want %v", name, got, want)
		}
	}
}
