"""boto3 half of e2e/access_test.go: a queue policy granting team B, and
an SNS topic of team B delivering into team A's queue, each only while
team A's queue policy allows it; a topic policy of team A granting team B
Publish, only while it says so; ListTopics showing each team its own
topics. Usage: access_scenarios.py ENDPOINT."""
import json
import sys
import time

from botocore.exceptions import ClientError

import policy_helpers
from policy_helpers import denied

endpoint = sys.argv[1]
ACCOUNT = "000000000000"


def client(service, key, secret):
    return policy_helpers.client(endpoint, service, key, secret)


a = client("sqs", "AKIATEAMA00000000001", "team-a-secret")
b = client("sqs", "AKIATEAMB00000000001", "team-b-secret")
b_sns = client("sns", "AKIATEAMB00000000001", "team-b-secret")

url = a.create_queue(QueueName="team-a-inbox")["QueueUrl"]
arn = a.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
queue = policy_helpers.Queue(a, url)
depth, set_policy = queue.depth, queue.set_policy


# 0. Team B's cross-team calls on team A's queue (made by the Go test with
# the AWS CLI) are refused and change nothing.
orders = a.get_queue_url(QueueName="team-a-orders")["QueueUrl"]
before = a.get_queue_attributes(QueueUrl=orders, AttributeNames=["All"])["Attributes"]
denied(lambda: b.send_message(QueueUrl=orders, MessageBody="x"))
denied(lambda: b.send_message_batch(QueueUrl=orders, Entries=[{"Id": "1", "MessageBody": "x"}]))
denied(lambda: b.set_queue_attributes(QueueUrl=orders, Attributes={"VisibilityTimeout": "600"}))
denied(lambda: b.get_queue_url(QueueName="team-a-orders"))
denied(lambda: b.create_queue(QueueName="team-a-impostor"))
denied(lambda: b.add_permission(QueueUrl=orders, Label="mine", AWSAccountIds=[ACCOUNT], Actions=["ReceiveMessage"]))
denied(lambda: b.tag_queue(QueueUrl=orders, Tags={"owner": "b"}))
after = a.get_queue_attributes(QueueUrl=orders, AttributeNames=["All"])["Attributes"]
for k in ("VisibilityTimeout", "ApproximateNumberOfMessages", "Policy", "RedrivePolicy"):
    assert before.get(k) == after.get(k), (k, before.get(k), after.get(k))
assert a.list_queue_tags(QueueUrl=orders).get("Tags", {}) == {}
assert not any(u.endswith("/team-a-impostor") for u in a.list_queues().get("QueueUrls", []))

# 1. Without a grant, team B may not send into team A's queue.
denied(lambda: b.send_message(QueueUrl=url, MessageBody="no"))
assert depth() == 0

# 2. A queue policy naming team B's user grants SendMessage, and only that.
set_policy([{"Sid": "TeamBSends", "Effect": "Allow",
             "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:user/team-b"},
             "Action": "sqs:SendMessage", "Resource": arn}])
b.send_message(QueueUrl=url, MessageBody="granted")
assert depth() == 1
denied(lambda: b.receive_message(QueueUrl=url))
denied(lambda: b.purge_queue(QueueUrl=url))

# 3. Its removal takes effect at once: the very next call is refused.
set_policy([])
denied(lambda: b.send_message(QueueUrl=url, MessageBody="revoked"))
assert depth() == 1

# 4. Team B's topic delivers into team A's queue only while A's policy
# allows the topic's ARN.
topic = b_sns.create_topic(Name="team-b-events")["TopicArn"]
b_sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn)
b_sns.publish(TopicArn=topic, Message="before-the-grant")
time.sleep(0.5)
assert depth() == 1, depth()

set_policy([{"Sid": "TopicOfTeamB", "Effect": "Allow",
             "Principal": {"Service": "sns.amazonaws.com"},
             "Action": "sqs:SendMessage", "Resource": arn,
             "Condition": {"ArnEquals": {"aws:SourceArn": topic}}}])
b_sns.publish(TopicArn=topic, Message="with-the-grant")
queue.wait_depth(2)

set_policy([])
b_sns.publish(TopicArn=topic, Message="after-the-grant")
time.sleep(0.5)
assert depth() == 2, depth()

bodies = queue.drain()
assert sorted(bodies) == ["granted", "with-the-grant"], bodies

# 5. A denied SNS call is SNS's AuthorizationError.
denied(lambda: b_sns.publish(TopicArn=f"arn:aws:sns:us-east-1:{ACCOUNT}:team-a-alerts", Message="x"),
       code="AuthorizationError")

# 6. Team A's topic lets team B publish only while its policy says so (the
# default topic policy lets nobody in by itself), and ListTopics shows each
# team its own topics.
a_sns = client("sns", "AKIATEAMA00000000001", "team-a-secret")
alerts = a_sns.create_topic(Name="team-a-alerts")["TopicArn"]
denied(lambda: b_sns.publish(TopicArn=alerts, Message="x"), code="AuthorizationError")
a_sns.set_topic_attributes(TopicArn=alerts, AttributeName="Policy", AttributeValue=json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:user/team-b"},
                   "Action": "sns:Publish", "Resource": alerts}]}))
b_sns.publish(TopicArn=alerts, Message="granted")
denied(lambda: b_sns.subscribe(TopicArn=alerts, Protocol="sqs", Endpoint=arn), code="AuthorizationError")
listed = lambda c: sorted(t["TopicArn"] for t in c.list_topics()["Topics"])
assert listed(a_sns) == [alerts], listed(a_sns)
assert listed(b_sns) == [topic], listed(b_sns)
a_sns.set_topic_attributes(TopicArn=alerts, AttributeName="Policy", AttributeValue="")
denied(lambda: b_sns.publish(TopicArn=alerts, Message="x"), code="AuthorizationError")

print(json.dumps({"ok": True, "topic": topic}))
