"""The fixture with a handler in the seed teams' style: an SQS batch
handler (Lambda's event shape) reporting batchItemFailures, on a FIFO
queue whose dead-letter queue takes a message after one failed receive
(maxReceiveCount 1), driven as Lambda's event source mapping drives it."""

import json
import time
import urllib.request


def stock_inbound_handler(event, context):
    """Structural failures (a body that is not the expected JSON) are
    retried, through batchItemFailures; a known content failure (an empty
    file) is logged and acknowledged."""
    failures = []
    for record in event["Records"]:
        try:
            msg = json.loads(record["body"])
            bucket, key = msg["bucket"], msg["key"]
        except (ValueError, KeyError, TypeError):
            failures.append({"itemIdentifier": record["messageId"]})
            continue
        if key.endswith("empty.csv"):
            continue  # known content failure: acknowledged, never retried
        assert bucket and key
    return {"batchItemFailures": failures}


def poll_once(sqs, queue_url, handler):
    """One poll of an event source mapping with ReportBatchItemFailures:
    receive a batch, call the handler, delete what did not fail."""
    out = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=1,
                              AttributeNames=["All"], MessageAttributeNames=["All"])
    msgs = out.get("Messages", [])
    if not msgs:
        return 0
    event = {"Records": [{"messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
                          "attributes": m.get("Attributes", {}), "eventSource": "aws:sqs"} for m in msgs]}
    failed = {f["itemIdentifier"] for f in handler(event, None)["batchItemFailures"]}
    done = [m for m in msgs if m["MessageId"] not in failed]
    if done:
        sqs.delete_message_batch(QueueUrl=queue_url, Entries=[
            {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(done)])
    return len(msgs)


def test_health(tidemq):
    with urllib.request.urlopen(tidemq.endpoint + "/health", timeout=5) as r:
        assert r.status == 200
        assert json.load(r)["status"] == "ok"


def test_handler_failure_goes_to_the_dlq(tidemq_session):
    sqs = tidemq_session.client("sqs")
    dlq_url = sqs.create_queue(QueueName="stock-inbound-dlq.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    url = sqs.create_queue(QueueName="stock-inbound.fifo", Attributes={
        "FifoQueue": "true", "VisibilityTimeout": "1",
        "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": "1"}),
    })["QueueUrl"]
    bodies = [json.dumps({"bucket": "stock", "key": "acme/dealer-7/stock.csv"}),
              "not json at all",
              json.dumps({"bucket": "stock", "key": "acme/dealer-8/empty.csv"})]
    for i, body in enumerate(bodies):
        group = "acme/dealer-%d" % i
        sqs.send_message(QueueUrl=url, MessageBody=body, MessageGroupId=group, MessageDeduplicationId="m%d" % i)

    # The first polls hand every message to the handler once; the
    # malformed one fails and stays, in flight for the 1 s visibility
    # timeout. The next receive after it finds the message at its second
    # receive with maxReceiveCount 1, and moves it to the DLQ.
    seen = 0
    deadline = time.monotonic() + 10
    while seen < 3 and time.monotonic() < deadline:
        seen += poll_once(sqs, url, stock_inbound_handler)
    assert seen == 3
    dead = []
    deadline = time.monotonic() + 15
    while not dead and time.monotonic() < deadline:
        assert poll_once(sqs, url, stock_inbound_handler) == 0, "the failed message was delivered again"
        dead = sqs.receive_message(QueueUrl=dlq_url, WaitTimeSeconds=1).get("Messages", [])
    assert [m["Body"] for m in dead] == ["not json at all"]
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert attrs["ApproximateNumberOfMessages"] == "0"
    assert attrs["ApproximateNumberOfMessagesNotVisible"] == "0"


def test_session_talks_to_the_fixture_only(tidemq, tidemq_session):
    sqs = tidemq_session.client("sqs")
    assert sqs.meta.endpoint_url == tidemq.endpoint
    assert tidemq_session.region_name == "us-east-1"
    sqs.create_queue(QueueName="fixture-check")
    assert any(u.endswith("/fixture-check") for u in sqs.list_queues().get("QueueUrls", []))
