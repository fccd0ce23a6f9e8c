"""Helpers shared by the boto3 halves of the access tests
(access_scenarios.py, accounts_scenarios.py): clients of one endpoint,
a denied call, and one queue's depth, policy and bodies."""
import json
import time

import boto3
from botocore.exceptions import ClientError


def client(endpoint, service, key, secret):
    return boto3.client(service, endpoint_url=endpoint, region_name="us-east-1",
                        aws_access_key_id=key, aws_secret_access_key=secret)


def denied(fn, code="AccessDenied", status=403):
    """fn must fail with code and status."""
    try:
        fn()
    except ClientError as e:
        got = e.response["Error"]["Code"]
        got_status = e.response["ResponseMetadata"]["HTTPStatusCode"]
        assert got == code and got_status == status, (got, got_status, e.response)
        return
    raise AssertionError("the call was allowed")


class Queue:
    """One queue as its owner sees it."""

    def __init__(self, sqs, url):
        self.sqs, self.url = sqs, url

    def depth(self):
        attrs = self.sqs.get_queue_attributes(QueueUrl=self.url, AttributeNames=["ApproximateNumberOfMessages"])
        return int(attrs["Attributes"]["ApproximateNumberOfMessages"])

    def set_policy(self, statements):
        doc = "" if not statements else json.dumps({"Version": "2012-10-17", "Statement": statements})
        self.sqs.set_queue_attributes(QueueUrl=self.url, Attributes={"Policy": doc})

    def wait_depth(self, n, seconds=10):
        deadline = time.time() + seconds
        while self.depth() < n and time.time() < deadline:
            time.sleep(0.1)
        assert self.depth() == n, self.depth()

    def drain(self):
        """Receives and deletes every message; returns their bodies, an
        SNS envelope's Message in its place."""
        bodies = []
        while True:
            got = self.sqs.receive_message(QueueUrl=self.url, MaxNumberOfMessages=10, WaitTimeSeconds=0).get("Messages", [])
            if not got:
                return bodies
            for m in got:
                body = m["Body"]
                if body.startswith("{"):
                    body = json.loads(body)["Message"]
                bodies.append(body)
                self.sqs.delete_message(QueueUrl=self.url, ReceiptHandle=m["ReceiptHandle"])
