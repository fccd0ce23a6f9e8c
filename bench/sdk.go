package bench

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// SDKClient drives an endpoint through the official aws-sdk-go-v2 SQS
// client (which checks every MD5 it is given).
type SDKClient struct{ C *sqs.Client }

func (s SDKClient) CreateQueue(ctx context.Context, name string, attrs map[string]string) (string, error) {
	out, err := s.C.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.QueueUrl), nil
}

func (s SDKClient) DeleteQueue(ctx context.Context, url string) error {
	_, err := s.C.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(url)})
	return err
}

func (s SDKClient) Send(ctx context.Context, url string, msgs []Outgoing, batch bool) error {
	if !batch {
		m := msgs[0]
		in := &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(m.Body)}
		if m.Group != "" {
			in.MessageGroupId, in.MessageDeduplicationId = aws.String(m.Group), aws.String(m.Dedup)
		}
		_, err := s.C.SendMessage(ctx, in)
		return err
	}
	entries := make([]types.SendMessageBatchRequestEntry, len(msgs))
	for i, m := range msgs {
		entries[i] = types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(m.Body)}
		if m.Group != "" {
			entries[i].MessageGroupId, entries[i].MessageDeduplicationId = aws.String(m.Group), aws.String(m.Dedup)
		}
	}
	out, err := s.C.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: entries})
	if err == nil && len(out.Failed) > 0 {
		err = fmt.Errorf("%d batch entries failed: %s", len(out.Failed), aws.ToString(out.Failed[0].Message))
	}
	return err
}

func (s SDKClient) Receive(ctx context.Context, url string, max, wait int) ([]Received, error) {
	out, err := s.C.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url),
		MaxNumberOfMessages: int32(max), WaitTimeSeconds: int32(wait)})
	if err != nil {
		return nil, err
	}
	msgs := make([]Received, len(out.Messages))
	for i, m := range out.Messages {
		msgs[i] = Received{Body: aws.ToString(m.Body), Handle: aws.ToString(m.ReceiptHandle)}
	}
	return msgs, nil
}

func (s SDKClient) Delete(ctx context.Context, url string, handles []string, batch bool) error {
	if !batch {
		for _, h := range handles {
			if _, err := s.C.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: aws.String(h)}); err != nil {
				return err
			}
		}
		return nil
	}
	entries := make([]types.DeleteMessageBatchRequestEntry, len(handles))
	for i, h := range handles {
		entries[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(h)}
	}
	out, err := s.C.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(url), Entries: entries})
	if err == nil && len(out.Failed) > 0 {
		err = fmt.Errorf("%d deletes failed: %s", len(out.Failed), aws.ToString(out.Failed[0].Message))
	}
	return err
}

func (s SDKClient) QueueARN(ctx context.Context, url string) (string, error) {
	out, err := s.C.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	if err != nil {
		return "", err
	}
	if out.Attributes["QueueArn"] == "" {
		return "", fmt.Errorf("GetQueueAttributes: no QueueArn in %v", out.Attributes)
	}
	return out.Attributes["QueueArn"], nil
}

func (s SDKClient) Counts(ctx context.Context, url string) (int64, int64, error) {
	out, err := s.C.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []types.QueueAttributeName{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"}})
	if err != nil {
		return 0, 0, err
	}
	v, _ := strconv.ParseInt(out.Attributes["ApproximateNumberOfMessages"], 10, 64)
	n, _ := strconv.ParseInt(out.Attributes["ApproximateNumberOfMessagesNotVisible"], 10, 64)
	return v, n, nil
}
