"""boto3 scenarios for the tidemq end-to-end tests.

Usage: python3 boto3_scenarios.py ENDPOINT_URL SCENARIO

Each scenario drives a running tidemq with boto3 the way the seed teams do,
asserts as it goes and, when everything held, prints one JSON object with
"ok": true (plus whatever the Go test wants to log) as the last stdout line.
A failed assertion exits non-zero with the reason on stderr.

Each scenario creates its own queues, prefixed by the scenario name, so the
scenarios can run in parallel against one server.
"""

import hashlib
import json
import struct
import sys
import threading
import time
import uuid

import boto3
import botocore.exceptions
from botocore.config import Config

ENDPOINT = sys.argv[1]
SCENARIO = sys.argv[2]
PREFIX = "py-" + SCENARIO.replace("_", "-")


def new_client():
    return boto3.client(
        "sqs",
        endpoint_url=ENDPOINT,
        region_name="us-east-1",
        config=Config(
            retries={"max_attempts": 1, "mode": "standard"},
            connect_timeout=5,
            read_timeout=40,  # > the longest long poll
        ),
    )


sqs = new_client()


class Failure(Exception):
    pass


def check(cond, msg, *args):
    if not cond:
        raise Failure(msg % args if args else msg)


def create(name, **attrs):
    kwargs = {"QueueName": PREFIX + "-" + name}
    if attrs:
        kwargs["Attributes"] = {k: str(v) for k, v in attrs.items()}
    return sqs.create_queue(**kwargs)["QueueUrl"]


def arn(url):
    return sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]


def queue_messages_count(queue_url):
    """Seed 002 verbatim: total messages = visible + delayed + in-flight."""
    res = sqs.get_queue_attributes(
        QueueUrl=queue_url,
        AttributeNames=[
            "ApproximateNumberOfMessages",
            "ApproximateNumberOfMessagesDelayed",
            "ApproximateNumberOfMessagesNotVisible",
        ],
    )
    attrs = res["Attributes"]
    return (
        int(attrs["ApproximateNumberOfMessages"])
        + int(attrs["ApproximateNumberOfMessagesDelayed"])
        + int(attrs["ApproximateNumberOfMessagesNotVisible"])
    )


def depth(queue_url):
    attrs = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["All"])["Attributes"]
    return (
        int(attrs["ApproximateNumberOfMessages"]),
        int(attrs["ApproximateNumberOfMessagesDelayed"]),
        int(attrs["ApproximateNumberOfMessagesNotVisible"]),
    )


def md5_hex(data):
    return hashlib.md5(data).hexdigest()


def attributes_md5(attrs):
    """MD5OfMessageAttributes per the reference, §3."""
    buf = b""
    for name in sorted(attrs):
        a = attrs[name]
        for part in (name.encode(), a["DataType"].encode()):
            buf += struct.pack(">I", len(part)) + part
        if "StringValue" in a:
            v = a["StringValue"].encode()
            buf += b"\x01" + struct.pack(">I", len(v)) + v
        else:
            v = a["BinaryValue"]
            buf += b"\x02" + struct.pack(">I", len(v)) + v
    return md5_hex(buf)


def error_code(exc):
    return exc.response.get("Error", {}).get("Code")


def expect_error(code, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except botocore.exceptions.ClientError as e:
        check(error_code(e) == code, "%s: error code %r, want %r (%s)", fn.__name__, error_code(e), code, e)
        return e
    raise Failure("%s(%r) succeeded, want error %s" % (fn.__name__, kwargs, code))


def receive_all(url, want, **kwargs):
    """Receives until `want` messages arrived or 5 receives came back empty."""
    got, empty = [], 0
    while len(got) < want and empty < 5:
        msgs = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1, **kwargs).get("Messages", [])
        if not msgs:
            empty += 1
        got.extend(msgs)
    return got


# ---------------------------------------------------------------------------


def scenario_sns_envelope():
    """Seed 002: SNS-style double-encoded bodies sent with send_message and
    DelaySeconds, the queue depth as visible + delayed + in flight, the
    requeue-with-backoff pattern and change_message_visibility."""
    url = create("docloader", VisibilityTimeout=30)
    event = {
        "caseId": 1001,
        "batchId": 7,
        "eventType": "DOCUMENT_PROCESSED",
        "exhibitIds": [1, 2, 3],
        "note": "quotes \" backslash \\ unicode caf\u00e9 \u2603 \U0001F680 <&>",
        "eventDetail": json.dumps({"retry_count": 0, "prev_page_count": 12}),
    }

    # send_sqs_message, verbatim: the envelope with a delay. The checks of
    # the delayed state hold only while the delay cannot be over: each
    # asserts when its answer came back less than DELAY after the send
    # began (a loaded machine may take longer, and then the message may
    # rightly be visible).
    DELAY = 4
    body = json.dumps({"Message": json.dumps(event)})
    send_began = time.monotonic()
    sent = sqs.send_message(QueueUrl=url, MessageBody=body, DelaySeconds=DELAY)
    check(sent["MD5OfMessageBody"] == md5_hex(body.encode()), "MD5OfMessageBody %s", sent["MD5OfMessageBody"])
    sent_at = time.monotonic()

    def while_delayed(what, ok):
        check(ok or time.monotonic() - send_began >= DELAY, "%s", what)

    d = depth(url)
    while_delayed("depth right after a delayed send: %s, want (0, 1, 0)" % (d,), d == (0, 1, 0))
    n = queue_messages_count(url)
    while_delayed("queue_messages_count = %d, want 1 (the delayed message)" % n, n == 1)
    got = sqs.receive_message(QueueUrl=url)
    while_delayed("a delayed message was received at once", "Messages" not in got)

    # A long poll returns it once the delay is over (unless the receive
    # above already took it on a slow machine).
    msgs = got.get("Messages") or sqs.receive_message(QueueUrl=url, WaitTimeSeconds=10, AttributeNames=["All"]).get("Messages", [])
    waited = time.monotonic() - sent_at
    check(len(msgs) == 1, "long poll over the delay returned %d messages", len(msgs))
    check(DELAY - 0.5 <= waited <= DELAY + 8, "the delayed message arrived after %.2fs, want about %ds", waited, DELAY)
    msg = msgs[0]
    check(msg["MessageId"] == sent["MessageId"], "MessageId changed")
    check(msg["Body"] == body, "body changed: %r", msg["Body"])
    check(msg["MD5OfBody"] == md5_hex(body.encode()), "MD5OfBody %s", msg["MD5OfBody"])
    check(queue_messages_count(url) == 1, "queue_messages_count while in flight = %d, want 1", queue_messages_count(url))
    check(depth(url) == (0, 0, 1), "depth while in flight: %s", depth(url))

    # preprocess_record, verbatim.
    record = {"body": msg["Body"]}
    parsed = json.loads(record.get("body", "{}"))
    check("Message" in parsed, "no Message key in %r", parsed)
    message = json.loads(parsed["Message"])
    check(message == event, "double-decoded message %r, want %r", message, event)

    # Extend visibility (the seed's DB-error path), then give it back.
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=msg["ReceiptHandle"], VisibilityTimeout=120)
    check(depth(url) == (0, 0, 1), "depth after extending visibility: %s", depth(url))
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=msg["ReceiptHandle"], VisibilityTimeout=0)
    check(depth(url) == (1, 0, 0), "depth after visibility 0: %s", depth(url))
    msgs = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=2, AttributeNames=["ApproximateReceiveCount"])["Messages"]
    check(msgs[0]["Attributes"]["ApproximateReceiveCount"] == "2", "receive count %s", msgs[0]["Attributes"])
    record = {"body": msgs[0]["Body"], "receiptHandle": msgs[0]["ReceiptHandle"]}

    # handle_requeue_exception, verbatim: re-encode, send with a delay,
    # delete the original.
    body = json.loads(record.get("body", "{}"))
    message = json.loads(body["Message"])
    event_detail = json.loads(message.get("eventDetail", "{}"))
    event_detail.update({"retry_count": 1, "prev_page_count": 40})
    message["eventDetail"] = json.dumps(event_detail)
    body["Message"] = json.dumps(message)
    final_body = json.dumps(body)
    sqs.send_message(QueueUrl=url, MessageBody=final_body, DelaySeconds=120)
    sqs.delete_message(QueueUrl=url, ReceiptHandle=record["receiptHandle"])
    check(depth(url) == (0, 1, 0), "depth after requeue + delete: %s, want (0, 1, 0)", depth(url))
    check(queue_messages_count(url) == 1, "queue_messages_count after requeue = %d", queue_messages_count(url))

    # Message attributes of every type come back with a correct MD5 (boto3
    # does not check it; we do).
    attrs = {
        "caseId": {"DataType": "Number", "StringValue": "1001"},
        "kind": {"DataType": "String", "StringValue": "DOCUMENT_PROCESSED"},
        "blob": {"DataType": "Binary", "BinaryValue": b"\x00\xff\x10binary"},
        "custom": {"DataType": "Number.int", "StringValue": "7"},
    }
    url2 = create("attrs")
    sent = sqs.send_message(QueueUrl=url2, MessageBody="with attributes", MessageAttributes=attrs)
    check(sent["MD5OfMessageAttributes"] == attributes_md5(attrs), "send MD5OfMessageAttributes %s, want %s",
          sent["MD5OfMessageAttributes"], attributes_md5(attrs))
    msg = sqs.receive_message(QueueUrl=url2, WaitTimeSeconds=2, MessageAttributeNames=["All"])["Messages"][0]
    check(msg["MessageAttributes"] == attrs, "attributes %r, want %r", msg["MessageAttributes"], attrs)
    check(msg["MD5OfMessageAttributes"] == attributes_md5(attrs), "receive MD5OfMessageAttributes %s", msg["MD5OfMessageAttributes"])
    return {"delayed_arrival_s": round(waited, 2)}


def scenario_redrive_loop():
    """Seed 002's redrive_dlq_messages against a DLQ filled by real failures
    (maxReceiveCount 1) and by send_to_dlq, with one straggler that becomes
    visible only after the first empty receive."""
    # Seed 002's naming, and its URLs built by hand in AWS's form rather
    # than taken from create_queue: the server finds the queue by the path.
    queue_name = PREFIX + "-doc_loader_1001_7"
    created = create("doc_loader_1001_7", VisibilityTimeout=30)
    create("doc_loader_1001_7_dlq", MessageRetentionPeriod=1209600)
    account_id = arn(created).split(":")[4]
    deploy_region = "us-east-1"
    main_queue_url = f"https://sqs.{deploy_region}.amazonaws.com/{account_id}/{queue_name}"
    dlq_url = f"{main_queue_url}_dlq"
    sqs.set_queue_attributes(
        QueueUrl=main_queue_url,
        Attributes={"RedrivePolicy": json.dumps({"deadLetterTargetArn": arn(dlq_url), "maxReceiveCount": 1})},
    )

    def envelope(i):
        return json.dumps({"Message": json.dumps({"caseId": 1001, "docId": i, "eventDetail": json.dumps({"retry_count": 3})})})

    # Four fail for real: received once, visibility dropped, received again
    # (which moves them), as a consumer that crashes would.
    for i in range(4):
        sqs.send_message(QueueUrl=main_queue_url, MessageBody=envelope(i))
    failed = receive_all(main_queue_url, 4)
    check(len(failed) == 4, "received %d of 4 messages from the main queue", len(failed))
    for m in failed:
        sqs.change_message_visibility(QueueUrl=main_queue_url, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0)
    check("Messages" not in sqs.receive_message(QueueUrl=main_queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=1),
          "messages came back from the main queue after maxReceiveCount 1")
    # Eleven go there directly (send_to_dlq), so the loop needs two batches.
    for i in range(4, 15):
        sqs.send_message(QueueUrl=dlq_url, MessageBody=envelope(i))
    check(queue_messages_count(dlq_url) == 15, "DLQ holds %d messages, want 15", queue_messages_count(dlq_url))
    # The straggler.
    sqs.send_message(QueueUrl=dlq_url, MessageBody=envelope(15), DelaySeconds=1)

    # redrive_dlq_messages, verbatim but for a 1 s long poll.
    count, final_pass = 0, True
    total_redriven = 0
    empty_receives = 0
    receives = 0
    start = time.monotonic()
    while True:
        wait_time = 1 if empty_receives > 0 else 0
        response = sqs.receive_message(QueueUrl=dlq_url, MaxNumberOfMessages=10, WaitTimeSeconds=wait_time)
        receives += 1
        check(receives < 50, "the redrive loop does not end")
        messages = response.get("Messages", [])
        if not messages:
            empty_receives += 1
            if empty_receives >= 3:
                break
            continue
        empty_receives = 0
        for msg in messages:
            body = json.loads(msg["Body"])
            message_content = json.loads(body["Message"])
            message_content["dlq_redriven"] = True
            event_detail = json.loads(message_content["eventDetail"])
            event_detail["retry_count"] = 0
            event_detail["dlq_redrive_count"] = count + 1
            event_detail["dlq_final_pass"] = final_pass
            message_content["eventDetail"] = json.dumps(event_detail)
            body["Message"] = json.dumps(message_content)
            modified_body = json.dumps(body)
            sqs.send_message(QueueUrl=main_queue_url, MessageBody=modified_body)
            sqs.delete_message(QueueUrl=dlq_url, ReceiptHandle=msg["ReceiptHandle"])
            total_redriven += 1
    took = time.monotonic() - start

    check(total_redriven == 16, "redrove %d messages, want 16 (15 + the straggler)", total_redriven)
    check(queue_messages_count(dlq_url) == 0, "DLQ still holds %d", queue_messages_count(dlq_url))
    check(queue_messages_count(main_queue_url) == 16, "main queue holds %d, want 16", queue_messages_count(main_queue_url))
    back = receive_all(main_queue_url, 16)
    check(len(back) == 16, "received %d redriven messages, want 16", len(back))
    ids = set()
    for m in back:
        content = json.loads(json.loads(m["Body"])["Message"])
        detail = json.loads(content["eventDetail"])
        check(content["dlq_redriven"] is True and detail == {"retry_count": 0, "dlq_redrive_count": 1, "dlq_final_pass": True},
              "markers missing in %r", content)
        ids.add(content["docId"])
    check(ids == set(range(16)), "redriven docIds %s", sorted(ids))
    return {"receives": receives, "loop_s": round(took, 2)}


def scenario_fifo():
    """Seed 000 / 003: FIFO with explicit group and dedup ids, content-based
    deduplication off, group ordering and blocking, and maxReceiveCount 1."""
    url = create("crm-sync.fifo", FifoQueue="true", ContentBasedDeduplication="false", VisibilityTimeout=360)
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    check(attrs.get("FifoQueue") == "true" and attrs.get("ContentBasedDeduplication") == "false", "attributes %r", attrs)

    # Without a dedup id the send is refused; without a group id too.
    e = expect_error("InvalidParameterValue", sqs.send_message, QueueUrl=url, MessageBody="x", MessageGroupId="contact-1")
    check("ContentBasedDeduplication" in str(e), "unhelpful message: %s", e)
    expect_error("MissingParameter", sqs.send_message, QueueUrl=url, MessageBody="x", MessageDeduplicationId="d-1")
    expect_error("InvalidParameterValue", sqs.send_message, QueueUrl=url, MessageBody="x",
                 MessageGroupId="contact-1", MessageDeduplicationId="d-x", DelaySeconds=5)
    expect_error("InvalidParameterValue", sqs.send_message_batch, QueueUrl=url, Entries=[
        {"Id": "a", "MessageBody": "x", "MessageGroupId": "g", "MessageDeduplicationId": "d-a"},
        {"Id": "b", "MessageBody": "x", "MessageGroupId": "g"},
    ])
    check(queue_messages_count(url) == 0, "refused sends left %d messages", queue_messages_count(url))

    # Seed 003: group "provider/dealer", a fresh uuid as dedup id.
    sends = [("hubspot/dealer-1", "a1"), ("hubspot/dealer-2", "b1"), ("hubspot/dealer-1", "a2"),
             ("hubspot/dealer-2", "b2"), ("hubspot/dealer-1", "a3"), ("hubspot/dealer-3", "c1")]
    seqs, raw_seqs = [], []
    for group, body in sends:
        r = sqs.send_message(QueueUrl=url, MessageBody=body, MessageGroupId=group, MessageDeduplicationId=str(uuid.uuid4()))
        check(r.get("SequenceNumber"), "no SequenceNumber for %s", body)
        seqs.append(int(r["SequenceNumber"]))
        raw_seqs.append(r["SequenceNumber"])
    check(seqs == sorted(seqs) and len(set(seqs)) == len(seqs), "sequence numbers not increasing: %s", seqs)

    # Dedup: the same explicit id (a contact id, per seed 000) is accepted
    # and answered with the first MessageId, and delivered once, even from
    # another group (the default scope is the queue).
    first = sqs.send_message(QueueUrl=url, MessageBody="contact 42 changed", MessageGroupId="hubspot/dealer-4",
                             MessageDeduplicationId="contact-42")
    for group in ("hubspot/dealer-4", "hubspot/dealer-5"):
        again = sqs.send_message(QueueUrl=url, MessageBody="contact 42 changed", MessageGroupId=group,
                                 MessageDeduplicationId="contact-42")
        check(again["MessageId"] == first["MessageId"], "duplicate send in %s: MessageId %s, want %s",
              group, again["MessageId"], first["MessageId"])
    check(queue_messages_count(url) == 7, "queue holds %d, want 7 (duplicates dropped)", queue_messages_count(url))

    # Group blocking: hold a1 in flight; dealer-1 delivers nothing more.
    first_batch = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=1, AttributeNames=["All"])["Messages"]
    check(first_batch[0]["Body"] == "a1", "first message %r, want a1", first_batch[0]["Body"])
    a1 = first_batch[0]
    for k, v in (("MessageGroupId", "hubspot/dealer-1"), ("ApproximateReceiveCount", "1")):
        check(a1["Attributes"].get(k) == v, "a1 %s = %r", k, a1["Attributes"].get(k))
    check(a1["Attributes"].get("MessageDeduplicationId") and a1["Attributes"].get("SequenceNumber") == raw_seqs[0],
          "a1 attributes %r", a1["Attributes"])
    others = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=0).get("Messages", [])
    check(not any(m["Body"].startswith("a") for m in others), "dealer-1 delivered %r while a1 is in flight",
          [m["Body"] for m in others])
    check(len(others) > 0, "other groups delivered nothing while dealer-1 was blocked")

    # a1 fails (visibility 0): it, not a2, comes next in its group.
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=a1["ReceiptHandle"], VisibilityTimeout=0)
    order = {}
    deadline = time.monotonic() + 15
    while sum(len(v) for v in order.values()) < 7 and time.monotonic() < deadline:
        msgs = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1,
                                   AttributeNames=["MessageGroupId"]).get("Messages", [])
        for m in msgs:
            order.setdefault(m["Attributes"]["MessageGroupId"], []).append(m["Body"])
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    want = {"hubspot/dealer-1": ["a1", "a2", "a3"], "hubspot/dealer-2": ["b1", "b2"],
            "hubspot/dealer-3": ["c1"], "hubspot/dealer-4": ["contact 42 changed"]}
    check(order == want, "per-group delivery order %r, want %r", order, want)
    check(queue_messages_count(url) == 0, "FIFO queue not drained: %d", queue_messages_count(url))

    # A batch send keeps request order within a group.
    r = sqs.send_message_batch(QueueUrl=url, Entries=[
        {"Id": "e%d" % i, "MessageBody": "batch-%d" % i, "MessageGroupId": "batch", "MessageDeduplicationId": "batch-%d" % i}
        for i in range(5)])
    check(len(r.get("Successful", [])) == 5 and not r.get("Failed"), "batch send %r", r)
    got = [m["Body"] for m in receive_all(url, 5)]
    check(got == ["batch-%d" % i for i in range(5)], "batch order %r", got)

    # Content-based deduplication: the body's SHA-256 is the dedup id.
    cbd = create("content.fifo", FifoQueue="true", ContentBasedDeduplication="true")
    one = sqs.send_message(QueueUrl=cbd, MessageBody='{"event": "same"}', MessageGroupId="g")
    two = sqs.send_message(QueueUrl=cbd, MessageBody='{"event": "same"}', MessageGroupId="g")
    three = sqs.send_message(QueueUrl=cbd, MessageBody='{"event": "other"}', MessageGroupId="g")
    check(one["MessageId"] == two["MessageId"] != three["MessageId"], "content-based dedup ids %s %s %s",
          one["MessageId"], two["MessageId"], three["MessageId"])
    check(queue_messages_count(cbd) == 2, "content-based dedup queue holds %d, want 2", queue_messages_count(cbd))

    # maxReceiveCount 1 into a FIFO DLQ (seed 000's crm-sync).
    dlq = create("crm-sync-dlq.fifo", FifoQueue="true", MessageRetentionPeriod=1209600)
    main = create("crm-sync-main.fifo", FifoQueue="true", ContentBasedDeduplication="false", VisibilityTimeout=360,
                  RedrivePolicy=json.dumps({"deadLetterTargetArn": arn(dlq), "maxReceiveCount": 1}))
    sent = sqs.send_message(QueueUrl=main, MessageBody='{"contactId": 42}', MessageGroupId="contact-42",
                            MessageDeduplicationId="engagement-9")
    m = sqs.receive_message(QueueUrl=main, VisibilityTimeout=0, AttributeNames=["All"])["Messages"][0]
    check(m["Attributes"]["ApproximateReceiveCount"] == "1", "first receive %r", m["Attributes"])
    check("Messages" not in sqs.receive_message(QueueUrl=main, WaitTimeSeconds=1), "FIFO message redelivered with maxReceiveCount 1")
    d = sqs.receive_message(QueueUrl=dlq, WaitTimeSeconds=2, AttributeNames=["All"]).get("Messages", [])
    check(len(d) == 1, "FIFO DLQ holds %d messages", len(d))
    a = d[0]["Attributes"]
    check(d[0]["MessageId"] == sent["MessageId"], "DLQ MessageId %s, want %s", d[0]["MessageId"], sent["MessageId"])
    check(a.get("ApproximateReceiveCount") == "2" and a.get("MessageGroupId") == "contact-42"
          and a.get("DeadLetterQueueSourceArn") == arn(main), "FIFO DLQ message attributes %r", a)
    return {"order": order}


def scenario_exceptions():
    """botocore's modeled exception classes, picked from __type."""
    try:
        sqs.get_queue_url(QueueName=PREFIX + "-missing")
        raise Failure("get_queue_url of a missing queue succeeded")
    except sqs.exceptions.QueueDoesNotExist as e:
        check(error_code(e) == "AWS.SimpleQueueService.NonExistentQueue", "Error.Code %r", error_code(e))
        check(e.response["ResponseMetadata"]["HTTPStatusCode"] == 400, "status %r", e.response["ResponseMetadata"])
        check(e.response["ResponseMetadata"].get("RequestId"), "no RequestId in %r", e.response["ResponseMetadata"])

    url = create("gone")
    sqs.delete_queue(QueueUrl=url)
    for call, kwargs in ((sqs.send_message, {"QueueUrl": url, "MessageBody": "x"}),
                         (sqs.receive_message, {"QueueUrl": url}),
                         (sqs.get_queue_attributes, {"QueueUrl": url, "AttributeNames": ["All"]})):
        try:
            call(**kwargs)
            raise Failure("%s on a deleted queue succeeded" % call.__name__)
        except sqs.exceptions.QueueDoesNotExist:
            pass

    url = create("exists", VisibilityTimeout=30)
    try:
        sqs.create_queue(QueueName=PREFIX + "-exists", Attributes={"VisibilityTimeout": "31"})
        raise Failure("create_queue with different attributes succeeded")
    except sqs.exceptions.QueueNameExists as e:
        check(error_code(e) == "QueueAlreadyExists", "Error.Code %r", error_code(e))

    sqs.purge_queue(QueueUrl=url)
    try:
        sqs.purge_queue(QueueUrl=url)
        raise Failure("second purge_queue succeeded")
    except sqs.exceptions.PurgeQueueInProgress as e:
        check(error_code(e) == "AWS.SimpleQueueService.PurgeQueueInProgress", "Error.Code %r", error_code(e))
        check(e.response["ResponseMetadata"]["HTTPStatusCode"] == 403, "status %r", e.response["ResponseMetadata"])

    try:
        sqs.delete_message(QueueUrl=url, ReceiptHandle="garbage")
        raise Failure("delete_message with a garbage handle succeeded")
    except sqs.exceptions.ReceiptHandleIsInvalid as e:
        check(error_code(e) == "ReceiptHandleIsInvalid", "Error.Code %r", error_code(e))

    try:
        sqs.send_message_batch(QueueUrl=url, Entries=[])
        raise Failure("empty send_message_batch succeeded")
    except sqs.exceptions.EmptyBatchRequest as e:
        check(error_code(e) == "AWS.SimpleQueueService.EmptyBatchRequest", "Error.Code %r", error_code(e))

    e = expect_error("InvalidParameterValue", sqs.receive_message, QueueUrl=url, MaxNumberOfMessages=11)
    check("MaxNumberOfMessages" in str(e), "message %s", e)
    return {}


def scenario_long_poll():
    """WaitTimeSeconds on an empty queue waits; a send from another thread
    ends the wait promptly; ReceiveMessageWaitTimeSeconds is the default."""
    url = create("poll")
    start = time.monotonic()
    r = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=2)
    empty_wait = time.monotonic() - start
    check("Messages" not in r, "empty queue returned %r", r)
    check(1.8 <= empty_wait <= 6, "WaitTimeSeconds=2 on an empty queue returned after %.2fs", empty_wait)

    sender = new_client()
    sent_at = {}

    def send_later():
        time.sleep(0.5)
        sender.send_message(QueueUrl=url, MessageBody="wake up")
        sent_at["t"] = time.monotonic()

    th = threading.Thread(target=send_later)
    start = time.monotonic()
    th.start()
    r = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=20)
    done = time.monotonic()
    th.join()
    msgs = r.get("Messages", [])
    check(len(msgs) == 1 and msgs[0]["Body"] == "wake up", "long poll returned %r", r)
    wake = done - start
    after_send = done - sent_at.get("t", done)
    check(wake < 6, "a 20s long poll took %.2fs to return a message sent after 0.5s", wake)
    check(after_send < 2, "the long poll returned %.2fs after the send completed", after_send)
    sqs.delete_message(QueueUrl=url, ReceiptHandle=msgs[0]["ReceiptHandle"])

    # The queue's ReceiveMessageWaitTimeSeconds applies without WaitTimeSeconds.
    url2 = create("poll-default", ReceiveMessageWaitTimeSeconds=4)
    start = time.monotonic()
    r = sqs.receive_message(QueueUrl=url2)
    default_wait = time.monotonic() - start
    check("Messages" not in r and 3.8 <= default_wait <= 10,
          "receive on a queue with ReceiveMessageWaitTimeSeconds=4 returned after %.2fs", default_wait)
    # ... and WaitTimeSeconds=0 overrides it.
    start = time.monotonic()
    sqs.receive_message(QueueUrl=url2, WaitTimeSeconds=0)
    short = time.monotonic() - start
    check(short < 2.5, "WaitTimeSeconds=0 took %.2fs on a queue with ReceiveMessageWaitTimeSeconds=4", short)
    return {"empty_wait_s": round(empty_wait, 2), "wake_s": round(wake, 2), "after_send_s": round(after_send, 2),
            "default_wait_s": round(default_wait, 2)}


def scenario_visibility():
    """Visibility timeouts in real time: a message comes back after its
    timeout, change_message_visibility resets the clock from now."""
    url = create("visibility", VisibilityTimeout=1)
    sqs.send_message(QueueUrl=url, MessageBody="slow")
    m = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=2)["Messages"][0]
    start = time.monotonic()
    check("Messages" not in sqs.receive_message(QueueUrl=url), "an in-flight message was received again at once")
    r = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=10, AttributeNames=["ApproximateReceiveCount"])
    back = time.monotonic() - start
    msgs = r.get("Messages", [])
    check(len(msgs) == 1 and msgs[0]["Attributes"]["ApproximateReceiveCount"] == "2", "after the timeout: %r", r)
    check(back < 6, "a message with a 1s visibility timeout came back after %.2fs", back)

    # Extend to 3s: a 1s long poll sees nothing, a later one gets it.
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=msgs[0]["ReceiptHandle"], VisibilityTimeout=3)
    check("Messages" not in sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1), "message visible before the extended timeout")
    r = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=10)
    check(len(r.get("Messages", [])) == 1, "message did not come back after the extended timeout")
    # The stale handle cannot be used to change visibility of a deleted message.
    sqs.delete_message(QueueUrl=url, ReceiptHandle=r["Messages"][0]["ReceiptHandle"])
    check(queue_messages_count(url) == 0, "queue not empty after delete")
    try:
        sqs.change_message_visibility(QueueUrl=url, ReceiptHandle="not-a-handle", VisibilityTimeout=10)
        raise Failure("change_message_visibility with a garbage handle succeeded")
    except sqs.exceptions.ReceiptHandleIsInvalid:
        pass
    return {"visibility_back_s": round(back, 2)}


def main():
    fn = globals().get("scenario_" + SCENARIO)
    if fn is None:
        print("unknown scenario %r" % SCENARIO, file=sys.stderr)
        sys.exit(2)
    try:
        result = fn() or {}
    except Failure as e:
        print("FAIL: %s" % e, file=sys.stderr)
        sys.exit(1)
    result["ok"] = True
    print(json.dumps(result))


if __name__ == "__main__":
    main()
