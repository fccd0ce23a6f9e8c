package sqs

// action is one SQS action: how to decode its input from each protocol and
// how to run it.
type action struct {
	decodeJSON  func(body []byte) (any, error)
	decodeQuery func(q *qnode) (any, error)
	run         func(c *call, in any) (output, error)
}

// op builds an action from its Query decoder and its implementation; the
// JSON decoder is encoding/json on the same input struct.
func op[In any](fromQuery func(*qnode, *In) error, run func(*call, *In) (output, error)) action {
	return action{
		decodeJSON: func(body []byte) (any, error) {
			in := new(In)
			if f, ok := any(in).(fastDecoder); ok {
				if f.decodeFast(body) {
					return in, nil
				}
				in = new(In) // encoding/json decides, from scratch
			}
			if err := decodeJSON(body, in); err != nil {
				return nil, err
			}
			return in, nil
		},
		decodeQuery: func(q *qnode) (any, error) {
			in := new(In)
			if err := fromQuery(q, in); err != nil {
				return nil, err
			}
			return in, nil
		},
		run: func(c *call, in any) (output, error) { return run(c, in.(*In)) },
	}
}

// actions maps each action name (the X-Amz-Target suffix and the Query
// Action value) to its implementation.
var actions = map[string]action{
	"CreateQueue":                  op(queryCreateQueue, (*call).createQueue),
	"GetQueueUrl":                  op(queryGetQueueURL, (*call).getQueueURL),
	"DeleteQueue":                  op(queryQueue, (*call).deleteQueue),
	"ListQueues":                   op(queryListQueues, (*call).listQueues),
	"ListDeadLetterSourceQueues":   op(queryListDeadLetterSourceQueues, (*call).listDeadLetterSourceQueues),
	"GetQueueAttributes":           op(queryGetQueueAttributes, (*call).getQueueAttributes),
	"SetQueueAttributes":           op(querySetQueueAttributes, (*call).setQueueAttributes),
	"PurgeQueue":                   op(queryQueue, (*call).purgeQueue),
	"TagQueue":                     op(queryTagQueue, (*call).tagQueue),
	"UntagQueue":                   op(queryUntagQueue, (*call).untagQueue),
	"ListQueueTags":                op(queryQueue, (*call).listQueueTags),
	"AddPermission":                op(queryAddPermission, (*call).addPermission),
	"RemovePermission":             op(queryRemovePermission, (*call).removePermission),
	"SendMessage":                  op(querySendMessage, (*call).sendMessage),
	"SendMessageBatch":             op(querySendMessageBatch, (*call).sendMessageBatch),
	"ReceiveMessage":               op(queryReceiveMessage, (*call).receiveMessage),
	"DeleteMessage":                op(queryDeleteMessage, (*call).deleteMessage),
	"DeleteMessageBatch":           op(queryDeleteMessageBatch, (*call).deleteMessageBatch),
	"ChangeMessageVisibility":      op(queryChangeVisibility, (*call).changeVisibility),
	"ChangeMessageVisibilityBatch": op(queryChangeVisibilityBatch, (*call).changeVisibilityBatch),
	"StartMessageMoveTask":         op(queryStartMoveTask, (*call).startMoveTask),
	"ListMessageMoveTasks":         op(queryListMoveTasks, (*call).listMoveTasks),
	"CancelMessageMoveTask":        op(queryCancelMoveTask, (*call).cancelMoveTask),
}
