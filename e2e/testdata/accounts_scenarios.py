"""boto3 half of e2e/accounts_test.go: two accounts on one tidemq, with the
example principals file. Team A (account 000000000000) grants the partner's
account (111122223333) by its queue policy; the grant works for the
partner's application only while the policy says so (its removal takes
effect at once); QueueOwnerAWSAccountId names team A's queue; topics are
per account (the same name in both is two topics); the partner's topic
delivers into team A's queue only while A's policy allows its ARN.
Usage: accounts_scenarios.py ENDPOINT."""
import json
import sys
import time

from botocore.exceptions import ClientError

import policy_helpers
from policy_helpers import denied

endpoint = sys.argv[1]
HOME, PARTNER = "000000000000", "111122223333"


def client(service, key, secret):
    return policy_helpers.client(endpoint, service, key, secret)


a = client("sqs", "AKIATEAMA00000000001", "team-a-secret")
a_sns = client("sns", "AKIATEAMA00000000001", "team-a-secret")
app = client("sqs", "AKIAPARTNERAPP000001", "partner-app-secret")
app_sns = client("sns", "AKIAPARTNERAPP000001", "partner-app-secret")
root = client("sqs", "AKIAPARTNER000000001", "partner-secret")


url = a.create_queue(QueueName="team-a-partner-inbox")["QueueUrl"]
arn = a.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
queue = policy_helpers.Queue(a, url)
depth, set_policy = queue.depth, queue.set_policy
assert url.endswith(f"/{HOME}/team-a-partner-inbox"), url
assert arn == f"arn:aws:sqs:us-east-1:{HOME}:team-a-partner-inbox", arn


# 1. Cross-account without a grant: the partner's application may send by
# its own policy, but team A's queue does not allow it.
denied(lambda: app.send_message(QueueUrl=url, MessageBody="no"))
denied(lambda: app.get_queue_url(QueueName="team-a-partner-inbox", QueueOwnerAWSAccountId=HOME))
# A bare name or no owner is the caller's own account: no such queue there.
try:
    app.get_queue_url(QueueName="team-a-partner-inbox")
    raise AssertionError("the partner found team A's queue under its own account")
except ClientError as e:
    assert e.response["Error"]["Code"] in ("AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist"), e.response
assert depth() == 0

# 2. Team A's queue policy grants the partner's account SendMessage and
# GetQueueUrl: both sides allow now.
set_policy([{"Sid": "PartnerSends", "Effect": "Allow", "Principal": {"AWS": PARTNER},
             "Action": ["sqs:SendMessage", "sqs:GetQueueUrl"], "Resource": arn}])
got = app.get_queue_url(QueueName="team-a-partner-inbox", QueueOwnerAWSAccountId=HOME)["QueueUrl"]
assert got == url, (got, url)
app.send_message(QueueUrl=url, MessageBody="granted")
root.send_message(QueueUrl=url, MessageBody="granted to the root too")
assert depth() == 2, depth()
# Only what the policy grants: no receive, no purge.
denied(lambda: app.receive_message(QueueUrl=url))
denied(lambda: root.purge_queue(QueueUrl=url))

# 3. Its removal takes effect at once.
set_policy([])
denied(lambda: app.send_message(QueueUrl=url, MessageBody="revoked"))
assert depth() == 2, depth()

# 4. Topics per account: the same name is two topics, each account lists its own.
theirs = app_sns.create_topic(Name="team-a-events")["TopicArn"]
ours = a_sns.create_topic(Name="team-a-events")["TopicArn"]
assert theirs == f"arn:aws:sns:us-east-1:{PARTNER}:team-a-events", theirs
assert ours == f"arn:aws:sns:us-east-1:{HOME}:team-a-events", ours
assert [t["TopicArn"] for t in app_sns.list_topics()["Topics"]] == [theirs]
assert theirs not in [t["TopicArn"] for t in a_sns.list_topics()["Topics"]]
owner = app_sns.get_topic_attributes(TopicArn=theirs)["Attributes"]["Owner"]
assert owner == PARTNER, owner
# Team A may not publish to the partner's topic (another account's, no grant).
denied(lambda: a_sns.publish(TopicArn=theirs, Message="x"), code="AuthorizationError")

# 5. The partner's topic delivers into team A's queue only while A's
# policy allows the topic's ARN; team A's topic of the same name is
# another ARN, not allowed by it.
app_sns.subscribe(TopicArn=theirs, Protocol="sqs", Endpoint=arn)
app_sns.publish(TopicArn=theirs, Message="before-the-grant")
time.sleep(0.5)
assert depth() == 2, depth()
set_policy([{"Sid": "PartnerTopic", "Effect": "Allow", "Principal": {"Service": "sns.amazonaws.com"},
             "Action": "sqs:SendMessage", "Resource": arn,
             "Condition": {"ArnEquals": {"aws:SourceArn": theirs}}}])
app_sns.publish(TopicArn=theirs, Message="with-the-grant")
queue.wait_depth(3)
a_sns.subscribe(TopicArn=ours, Protocol="sqs", Endpoint=arn)
a_sns.publish(TopicArn=ours, Message="team A's own topic, not granted")
set_policy([])
app_sns.publish(TopicArn=theirs, Message="after-the-grant")
time.sleep(0.5)
assert depth() == 3, depth()

bodies = queue.drain()
assert sorted(bodies) == ["granted", "granted to the root too", "with-the-grant"], bodies

print(json.dumps({"ok": True}))
