package container_test

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/testcontainers/testcontainers-go"

	"github.com/tidemq/tidemq/tidemqtest/container"
)

// The image under test: TIDEMQ_IMAGE, which CI sets to the image it has
// just built. Without it the test skips (a developer's machine may have
// no image); with it, the image must already be present: the test never
// pulls one.
func image(t *testing.T) string {
	img := os.Getenv("TIDEMQ_IMAGE")
	if img == "" {
		t.Skip("TIDEMQ_IMAGE is not set: build the image (deploy/image/build.sh) and name it")
	}
	if out, err := exec.Command("docker", "image", "inspect", "--format", "{{.Id}}", img).CombinedOutput(); err != nil {
		t.Fatalf("image %s is not present locally (the test does not pull): %v\n%s", img, err, out)
	}
	if os.Getenv("TESTCONTAINERS_RYUK_DISABLED") != "true" {
		t.Log("TESTCONTAINERS_RYUK_DISABLED is not true: testcontainers-go will pull its reaper image")
	}
	return img
}

// Run starts the image; the SDK does a round trip through its endpoint.
func TestRunRoundTrip(t *testing.T) {
	img := image(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := container.Run(ctx, img)
	if c != nil {
		testcontainers.CleanupContainer(t, c.Container)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tidemq at %s", c.URL)
	client := sqs.NewFromConfig(c.AWSConfig())
	q, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("container-check")})
	if err != nil {
		t.Fatalf("CreateQueue at %s: %v", c.URL, err)
	}
	if _, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("through the container")}); err != nil {
		t.Fatal(err)
	}
	out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, WaitTimeSeconds: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Messages) != 1 || aws.ToString(out.Messages[0].Body) != "through the container" {
		t.Fatalf("received %+v", out.Messages)
	}
	if _, err := client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: q.QueueUrl, ReceiptHandle: out.Messages[0].ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
}
