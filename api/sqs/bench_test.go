package sqs_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/tidemq/tidemq/api/sqs"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
)

// benchHandler is the SQS handler over an engine on the in-memory store:
// what the benchmarks below measure is the request path on the server
// (decoding, the engine, encoding), without a network or a client.
func benchHandler(b *testing.B) (http.Handler, string) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	e, err := engine.Open(engine.Options{Store: mem.New(), Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	h := sqs.NewHandler(sqs.Config{Broker: e, Logger: quiet})
	rec := call(b, h, "CreateQueue", `{"QueueName":"bench","Attributes":{"VisibilityTimeout":"300"}}`)
	var out struct{ QueueUrl string }
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		b.Fatal(err)
	}
	return h, out.QueueUrl
}

func call(b *testing.B, h http.Handler, action, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:9324/", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/x-amz-json-1.0")
	r.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK {
		b.Fatalf("%s: %d %s", action, rec.Code, rec.Body.String())
	}
	return rec
}

var benchBody = strings.Repeat("x", 256)

// BenchmarkHandlerSendMessage: one SendMessage of a 256-byte body.
func BenchmarkHandlerSendMessage(b *testing.B) {
	h, url := benchHandler(b)
	req := `{"QueueUrl":"` + url + `","MessageBody":"` + benchBody + `"}`
	b.ReportAllocs()
	for b.Loop() {
		call(b, h, "SendMessage", req)
	}
}

// BenchmarkHandlerReceiveDeleteBatch: per iteration, SendMessageBatch of
// 10, ReceiveMessage of 10 and DeleteMessageBatch of the 10 (one message
// cycle of the receive-batch scenario, times 10).
func BenchmarkHandlerReceiveDeleteBatch(b *testing.B) {
	h, url := benchHandler(b)
	var send strings.Builder
	send.WriteString(`{"QueueUrl":"` + url + `","Entries":[`)
	for i := range 10 {
		if i > 0 {
			send.WriteByte(',')
		}
		send.WriteString(`{"Id":"` + strconv.Itoa(i) + `","MessageBody":"` + benchBody + `"}`)
	}
	send.WriteString(`]}`)
	recv := `{"QueueUrl":"` + url + `","MaxNumberOfMessages":10}`
	b.ReportAllocs()
	for b.Loop() {
		call(b, h, "SendMessageBatch", send.String())
		rec := call(b, h, "ReceiveMessage", recv)
		var out struct {
			Messages []struct{ ReceiptHandle string }
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || len(out.Messages) != 10 {
			b.Fatalf("receive: %v, %d messages", err, len(out.Messages))
		}
		var del strings.Builder
		del.WriteString(`{"QueueUrl":"` + url + `","Entries":[`)
		for i, m := range out.Messages {
			if i > 0 {
				del.WriteByte(',')
			}
			del.WriteString(`{"Id":"` + strconv.Itoa(i) + `","ReceiptHandle":"` + m.ReceiptHandle + `"}`)
		}
		del.WriteString(`]}`)
		call(b, h, "DeleteMessageBatch", del.String())
	}
}
