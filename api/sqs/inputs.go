package sqs

// The input structs of the actions. JSON requests are unmarshalled into them
// directly (the json tags are the AWS member names, lower-case ones
// included); Query requests are decoded into them by query.go. Optional
// numbers are pointers so that "absent" and "0" differ; an empty string
// counts as absent.

type queueInput struct {
	QueueURL string `json:"QueueUrl"`
}

type createQueueInput struct {
	QueueName  string            `json:"QueueName"`
	Attributes map[string]string `json:"Attributes"`
	Tags       map[string]string `json:"tags"`
}

type getQueueURLInput struct {
	QueueName              string `json:"QueueName"`
	QueueOwnerAWSAccountID string `json:"QueueOwnerAWSAccountId"`
}

type listQueuesInput struct {
	QueueNamePrefix string `json:"QueueNamePrefix"`
	NextToken       string `json:"NextToken"`
	MaxResults      *int   `json:"MaxResults"`
}

type listDeadLetterSourceQueuesInput struct {
	QueueURL   string `json:"QueueUrl"`
	NextToken  string `json:"NextToken"`
	MaxResults *int   `json:"MaxResults"`
}

type getQueueAttributesInput struct {
	QueueURL       string   `json:"QueueUrl"`
	AttributeNames []string `json:"AttributeNames"`
}

type setQueueAttributesInput struct {
	QueueURL   string            `json:"QueueUrl"`
	Attributes map[string]string `json:"Attributes"`
}

type tagQueueInput struct {
	QueueURL string            `json:"QueueUrl"`
	Tags     map[string]string `json:"Tags"`
}

type untagQueueInput struct {
	QueueURL string   `json:"QueueUrl"`
	TagKeys  []string `json:"TagKeys"`
}

type addPermissionInput struct {
	QueueURL      string   `json:"QueueUrl"`
	Label         string   `json:"Label"`
	AWSAccountIDs []string `json:"AWSAccountIds"`
	Actions       []string `json:"Actions"`
}

type removePermissionInput struct {
	QueueURL string `json:"QueueUrl"`
	Label    string `json:"Label"`
}

// attributeValue is a MessageAttributeValue (and MessageSystemAttributeValue)
// on the wire. The list members are reserved by AWS and ignored. StringValue
// is decoded exactly as sent (jsontext.go): the domain judges its text.
type attributeValue struct {
	DataType         string      `json:"DataType"`
	StringValue      exactString `json:"StringValue"`
	BinaryValue      []byte      `json:"BinaryValue"`
	StringListValues []string    `json:"StringListValues"`
	BinaryListValues [][]byte    `json:"BinaryListValues"`
}

// messageFields are the members SendMessage and a SendMessageBatch entry share.
// MessageBody is decoded exactly as sent (jsontext.go): the domain judges
// its text.
type messageFields struct {
	MessageBody             exactString               `json:"MessageBody"`
	DelaySeconds            *int                      `json:"DelaySeconds"`
	MessageAttributes       map[string]attributeValue `json:"MessageAttributes"`
	MessageSystemAttributes map[string]attributeValue `json:"MessageSystemAttributes"`
	// The two ids are pointers: AWS refuses one given empty, which is
	// not the same as one left out (checkGivenIDs).
	MessageDeduplicationID *string `json:"MessageDeduplicationId"`
	MessageGroupID         *string `json:"MessageGroupId"`
}

type sendMessageInput struct {
	QueueURL string `json:"QueueUrl"`
	messageFields
}

type sendMessageBatchEntry struct {
	ID string `json:"Id"`
	messageFields
}

type sendMessageBatchInput struct {
	QueueURL string                  `json:"QueueUrl"`
	Entries  []sendMessageBatchEntry `json:"Entries"`
}

type receiveMessageInput struct {
	QueueURL                    string   `json:"QueueUrl"`
	AttributeNames              []string `json:"AttributeNames"`
	MessageSystemAttributeNames []string `json:"MessageSystemAttributeNames"`
	MessageAttributeNames       []string `json:"MessageAttributeNames"`
	MaxNumberOfMessages         *int     `json:"MaxNumberOfMessages"`
	VisibilityTimeout           *int     `json:"VisibilityTimeout"`
	WaitTimeSeconds             *int     `json:"WaitTimeSeconds"`
	ReceiveRequestAttemptID     string   `json:"ReceiveRequestAttemptId"`
}

type deleteMessageInput struct {
	QueueURL      string `json:"QueueUrl"`
	ReceiptHandle string `json:"ReceiptHandle"`
}

type deleteMessageBatchEntry struct {
	ID            string `json:"Id"`
	ReceiptHandle string `json:"ReceiptHandle"`
}

type deleteMessageBatchInput struct {
	QueueURL string                    `json:"QueueUrl"`
	Entries  []deleteMessageBatchEntry `json:"Entries"`
}

type changeVisibilityInput struct {
	QueueURL          string `json:"QueueUrl"`
	ReceiptHandle     string `json:"ReceiptHandle"`
	VisibilityTimeout *int   `json:"VisibilityTimeout"`
}

type changeVisibilityBatchEntry struct {
	ID                string `json:"Id"`
	ReceiptHandle     string `json:"ReceiptHandle"`
	VisibilityTimeout *int   `json:"VisibilityTimeout"`
}

type changeVisibilityBatchInput struct {
	QueueURL string                       `json:"QueueUrl"`
	Entries  []changeVisibilityBatchEntry `json:"Entries"`
}

type startMoveTaskInput struct {
	SourceARN                    string `json:"SourceArn"`
	DestinationARN               string `json:"DestinationArn"`
	MaxNumberOfMessagesPerSecond *int   `json:"MaxNumberOfMessagesPerSecond"`
}

type listMoveTasksInput struct {
	SourceARN  string `json:"SourceArn"`
	MaxResults *int   `json:"MaxResults"`
}

type cancelMoveTaskInput struct {
	TaskHandle string `json:"TaskHandle"`
}
