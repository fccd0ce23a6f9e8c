package sqs

// Decoders from Query parameters to the action inputs. Member names follow
// the SQS model's Query serialisation: flattened lists and maps named by the
// member's locationName (Attribute.N.Name, Tag.N.Key, AttributeName.N,
// SendMessageBatchRequestEntry.N.Id, ...).

func queryQueue(q *qnode, in *queueInput) error {
	in.QueueURL = q.str("QueueUrl")
	return nil
}

func queryCreateQueue(q *qnode, in *createQueueInput) error {
	in.QueueName = q.str("QueueName")
	in.Attributes = q.strMap("Attribute", "Name", "Value")
	in.Tags = q.strMap("Tag", "Key", "Value")
	return nil
}

func queryGetQueueURL(q *qnode, in *getQueueURLInput) error {
	in.QueueName = q.str("QueueName")
	in.QueueOwnerAWSAccountID = q.str("QueueOwnerAWSAccountId")
	return nil
}

func queryListQueues(q *qnode, in *listQueuesInput) (err error) {
	in.QueueNamePrefix = q.str("QueueNamePrefix")
	in.NextToken = q.str("NextToken")
	in.MaxResults, err = q.int("MaxResults")
	return err
}

func queryListDeadLetterSourceQueues(q *qnode, in *listDeadLetterSourceQueuesInput) (err error) {
	in.QueueURL = q.str("QueueUrl")
	in.NextToken = q.str("NextToken")
	in.MaxResults, err = q.int("MaxResults")
	return err
}

func queryGetQueueAttributes(q *qnode, in *getQueueAttributesInput) error {
	in.QueueURL = q.str("QueueUrl")
	in.AttributeNames = q.strList("AttributeName")
	return nil
}

func querySetQueueAttributes(q *qnode, in *setQueueAttributesInput) error {
	in.QueueURL = q.str("QueueUrl")
	in.Attributes = q.strMap("Attribute", "Name", "Value")
	return nil
}

func queryTagQueue(q *qnode, in *tagQueueInput) error {
	in.QueueURL = q.str("QueueUrl")
	in.Tags = q.strMap("Tag", "Key", "Value")
	return nil
}

func queryUntagQueue(q *qnode, in *untagQueueInput) error {
	in.QueueURL = q.str("QueueUrl")
	in.TagKeys = q.strList("TagKey")
	return nil
}

func queryAddPermission(q *qnode, in *addPermissionInput) error {
	in.QueueURL = q.str("QueueUrl")
	in.Label = q.str("Label")
	in.AWSAccountIDs = q.strList("AWSAccountId")
	in.Actions = q.strList("ActionName")
	return nil
}

func queryRemovePermission(q *qnode, in *removePermissionInput) error {
	in.QueueURL = q.str("QueueUrl")
	in.Label = q.str("Label")
	return nil
}

// queryMessageFields decodes the members SendMessage and a batch entry share.
func queryMessageFields(q *qnode, m *messageFields) (err error) {
	m.MessageBody = exactString(q.str("MessageBody"))
	if m.DelaySeconds, err = q.int("DelaySeconds"); err != nil {
		return err
	}
	if m.MessageAttributes, err = q.attrMap("MessageAttribute"); err != nil {
		return err
	}
	if m.MessageSystemAttributes, err = q.attrMap("MessageSystemAttribute"); err != nil {
		return err
	}
	if q.has("MessageDeduplicationId") {
		v := q.str("MessageDeduplicationId")
		m.MessageDeduplicationID = &v
	}
	if q.has("MessageGroupId") {
		v := q.str("MessageGroupId")
		m.MessageGroupID = &v
	}
	return nil
}

func querySendMessage(q *qnode, in *sendMessageInput) error {
	in.QueueURL = q.str("QueueUrl")
	return queryMessageFields(q, &in.messageFields)
}

func querySendMessageBatch(q *qnode, in *sendMessageBatchInput) error {
	in.QueueURL = q.str("QueueUrl")
	for _, it := range q.items("SendMessageBatchRequestEntry") {
		e := sendMessageBatchEntry{ID: it.str("Id")}
		if err := queryMessageFields(it, &e.messageFields); err != nil {
			return err
		}
		in.Entries = append(in.Entries, e)
	}
	return nil
}

// queryReceiveMessage decodes ReceiveMessage. The model's Query name of
// MessageSystemAttributeNames is AttributeName, like the deprecated
// AttributeNames; MessageSystemAttributeName.N is accepted too.
func queryReceiveMessage(q *qnode, in *receiveMessageInput) (err error) {
	in.QueueURL = q.str("QueueUrl")
	in.AttributeNames = q.strList("AttributeName")
	in.MessageSystemAttributeNames = q.strList("MessageSystemAttributeName")
	in.MessageAttributeNames = q.strList("MessageAttributeName")
	if in.MaxNumberOfMessages, err = q.int("MaxNumberOfMessages"); err != nil {
		return err
	}
	if in.VisibilityTimeout, err = q.int("VisibilityTimeout"); err != nil {
		return err
	}
	if in.WaitTimeSeconds, err = q.int("WaitTimeSeconds"); err != nil {
		return err
	}
	in.ReceiveRequestAttemptID = q.str("ReceiveRequestAttemptId")
	return nil
}

func queryDeleteMessage(q *qnode, in *deleteMessageInput) error {
	in.QueueURL = q.str("QueueUrl")
	in.ReceiptHandle = q.str("ReceiptHandle")
	return nil
}

func queryDeleteMessageBatch(q *qnode, in *deleteMessageBatchInput) error {
	in.QueueURL = q.str("QueueUrl")
	for _, it := range q.items("DeleteMessageBatchRequestEntry") {
		in.Entries = append(in.Entries, deleteMessageBatchEntry{ID: it.str("Id"), ReceiptHandle: it.str("ReceiptHandle")})
	}
	return nil
}

func queryChangeVisibility(q *qnode, in *changeVisibilityInput) (err error) {
	in.QueueURL = q.str("QueueUrl")
	in.ReceiptHandle = q.str("ReceiptHandle")
	in.VisibilityTimeout, err = q.int("VisibilityTimeout")
	return err
}

func queryChangeVisibilityBatch(q *qnode, in *changeVisibilityBatchInput) error {
	in.QueueURL = q.str("QueueUrl")
	for _, it := range q.items("ChangeMessageVisibilityBatchRequestEntry") {
		e := changeVisibilityBatchEntry{ID: it.str("Id"), ReceiptHandle: it.str("ReceiptHandle")}
		var err error
		if e.VisibilityTimeout, err = it.int("VisibilityTimeout"); err != nil {
			return err
		}
		in.Entries = append(in.Entries, e)
	}
	return nil
}

// The message-move-task members are all scalars, so their Query names are
// the member names.

func queryStartMoveTask(q *qnode, in *startMoveTaskInput) (err error) {
	in.SourceARN = q.str("SourceArn")
	in.DestinationARN = q.str("DestinationArn")
	in.MaxNumberOfMessagesPerSecond, err = q.int("MaxNumberOfMessagesPerSecond")
	return err
}

func queryListMoveTasks(q *qnode, in *listMoveTasksInput) (err error) {
	in.SourceARN = q.str("SourceArn")
	in.MaxResults, err = q.int("MaxResults")
	return err
}

func queryCancelMoveTask(q *qnode, in *cancelMoveTaskInput) error {
	in.TaskHandle = q.str("TaskHandle")
	return nil
}
