// Command gohandler is a Lambda function built with aws-lambda-go, as a
// user would write it, for lambdart's tests and the e2e tests. It handles
// SQS batches: a body "fail" is reported in batchItemFailures, "error"
// fails the whole invocation, "panic" panics, "exit" exits the process,
// "sleep" sleeps past any reasonable timeout, "env" answers with the
// environment and context it sees.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

var started = time.Now().UnixNano()

func handle(ctx context.Context, ev events.SQSEvent) (any, error) {
	var resp events.SQSEventResponse
	for _, r := range ev.Records {
		switch r.Body {
		case "fail":
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
		case "error":
			return nil, errors.New("the batch failed on purpose")
		case "panic":
			panic("handler panicked on purpose")
		case "exit":
			os.Exit(3)
		case "sleep":
			time.Sleep(time.Minute)
		case "env":
			lc, _ := lambdacontext.FromContext(ctx)
			deadline, _ := ctx.Deadline()
			return map[string]any{
				"requestId":    lc.AwsRequestID,
				"functionArn":  lc.InvokedFunctionArn,
				"functionName": lambdacontext.FunctionName,
				"memory":       lambdacontext.MemoryLimitInMB,
				"deadlineIn":   time.Until(deadline).Milliseconds(),
				"handler":      os.Getenv("_HANDLER"),
				"region":       os.Getenv("AWS_REGION"),
				"taskRoot":     os.Getenv("LAMBDA_TASK_ROOT"),
				"greeting":     os.Getenv("GREETING"),
				"started":      started,
				"records":      len(ev.Records),
				"pid":          os.Getpid(),
				"source":       r.EventSource,
			}, nil
		default:
			fmt.Println("processed", r.MessageId)
		}
	}
	return resp, nil
}

func main() {
	if os.Getenv("INIT_FAIL") != "" {
		// Lambda's Go runtime reports an init error only for a bad
		// handler; a failed start-up is an exit before the first /next.
		fmt.Fprintln(os.Stderr, "cannot initialise: INIT_FAIL is set")
		os.Exit(1)
	}
	lambda.Start(handle)
}
