package bench

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// The raw client's SNS side: the Query protocol (form bodies, XML
// answers), which is the only one SNS speaks.

var _ SNSClient = (*RawClient)(nil)

var queryHeaders = []string{"Content-Type: application/x-www-form-urlencoded; charset=utf-8"}

// QueryError is an SNS error answer.
type QueryError struct {
	Status  int
	Code    string `xml:"Error>Code"`
	Message string `xml:"Error>Message"`
}

func (e *QueryError) Error() string {
	return fmt.Sprintf("%s (HTTP %d): %s", e.Code, e.Status, e.Message)
}

// callQuery posts an SNS Query request and decodes its XML answer into out
// (if not nil).
func (c *RawClient) callQuery(ctx context.Context, form url.Values, out any) error {
	form.Set("Version", "2010-03-31")
	body := []byte(form.Encode())
	buf := bufs.Get().(*bytes.Buffer)
	defer bufs.Put(buf)
	buf.Reset()
	var status int
	var err error
	if c.pool == nil || c.SignSNS != nil {
		status, err = c.postHTTP(ctx, map[string][]string{"Content-Type": {"application/x-www-form-urlencoded; charset=utf-8"}}, c.SignSNS, body, buf)
	} else {
		status, err = c.pool.post(ctx, queryHeaders, body, buf)
	}
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		e := &QueryError{Status: status}
		_ = xml.Unmarshal(buf.Bytes(), e)
		return e
	}
	if out == nil {
		return nil
	}
	return xml.Unmarshal(buf.Bytes(), out)
}

func (c *RawClient) CreateTopic(ctx context.Context, name string) (string, error) {
	var out struct {
		ARN string `xml:"CreateTopicResult>TopicArn"`
	}
	if err := c.callQuery(ctx, url.Values{"Action": {"CreateTopic"}, "Name": {name}}, &out); err != nil {
		return "", err
	}
	return out.ARN, nil
}

func (c *RawClient) DeleteTopic(ctx context.Context, arn string) error {
	return c.callQuery(ctx, url.Values{"Action": {"DeleteTopic"}, "TopicArn": {arn}}, nil)
}

func (c *RawClient) QueueARN(ctx context.Context, url string) (string, error) {
	r := request{b: []byte{'{'}}
	r.str("QueueUrl", url)
	r.b = append(r.b, `,"AttributeNames":["QueueArn"]}`...)
	var out struct{ Attributes map[string]string }
	if err := c.call(ctx, "GetQueueAttributes", r.b, &out); err != nil {
		return "", err
	}
	if out.Attributes["QueueArn"] == "" {
		return "", fmt.Errorf("GetQueueAttributes: no QueueArn for %s", url)
	}
	return out.Attributes["QueueArn"], nil
}

func (c *RawClient) Subscribe(ctx context.Context, topicARN, queueARN string) error {
	return c.callQuery(ctx, url.Values{"Action": {"Subscribe"}, "TopicArn": {topicARN}, "Protocol": {"sqs"},
		"Endpoint": {queueARN}, "ReturnSubscriptionArn": {"true"}}, nil)
}

func (c *RawClient) Publish(ctx context.Context, topicARN string, msgs []string, batch bool) error {
	if !batch {
		var out struct {
			ID string `xml:"PublishResult>MessageId"`
		}
		if err := c.callQuery(ctx, url.Values{"Action": {"Publish"}, "TopicArn": {topicARN}, "Message": {msgs[0]}}, &out); err != nil {
			return err
		}
		if out.ID == "" {
			return fmt.Errorf("Publish: no MessageId in the answer")
		}
		return nil
	}
	form := url.Values{"Action": {"PublishBatch"}, "TopicArn": {topicARN}}
	for i, m := range msgs {
		p := "PublishBatchRequestEntries.member." + strconv.Itoa(i+1) + "."
		form.Set(p+"Id", strconv.Itoa(i))
		form.Set(p+"Message", m)
	}
	var out struct {
		Successful []string `xml:"PublishBatchResult>Successful>member>Id"`
		Failed     []struct {
			ID      string `xml:"Id"`
			Code    string `xml:"Code"`
			Message string `xml:"Message"`
		} `xml:"PublishBatchResult>Failed>member"`
	}
	if err := c.callQuery(ctx, form, &out); err != nil {
		return err
	}
	if len(out.Failed) > 0 {
		return fmt.Errorf("%d batch entries failed: %s: %s", len(out.Failed), out.Failed[0].Code, out.Failed[0].Message)
	}
	if len(out.Successful) != len(msgs) {
		return fmt.Errorf("PublishBatch: %d of %d entries answered", len(out.Successful), len(msgs))
	}
	return nil
}
