package bench_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/tidemq/tidemq/bench"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"

	apisqs "github.com/tidemq/tidemq/api/sqs"
)

// TestScenariosMoveEveryMessageOnce is the smoke run CI does: every
// scenario, small, against an in-process server, must account for every
// message. It checks correctness, not speed.
func TestScenariosMoveEveryMessageOnce(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := engine.Open(engine.Options{Store: mem.New(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	srv := httptest.NewServer(apisqs.NewHandler(apisqs.Config{Broker: e, Logger: quiet}))
	defer srv.Close()
	client := sqs.New(sqs.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", ""),
	})
	for _, s := range bench.Scenarios {
		count := 300
		if s == "longpoll" {
			count = 5
		}
		res, err := bench.Run(context.Background(), client, bench.Config{Scenario: s, Clients: 4, Count: count, Groups: 8})
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if !res.OK() || res.Messages != int64(count) {
			t.Errorf("%s: %+v", s, res)
		}
	}
	mixed, err := bench.Run(context.Background(), client, bench.Config{Scenario: "mixed", Clients: 4, Rate: 200, Duration: time.Second})
	if err != nil || !mixed.OK() || mixed.Messages < 50 {
		t.Errorf("mixed: %+v, %v", mixed, err)
	}
	depth, err := bench.Run(context.Background(), client, bench.Config{Scenario: "depth", Clients: 4, Prefill: 500, Count: 100})
	if err != nil || !depth.OK() || depth.Messages != 100 {
		t.Errorf("depth: %+v, %v", depth, err)
	}
	if _, err := bench.Run(context.Background(), client, bench.Config{Scenario: "nope"}); err == nil {
		t.Error("unknown scenario accepted")
	}
}
