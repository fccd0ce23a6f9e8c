package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// Issue 24: several accounts on one tidemq under --auth, with the README's
// example principals file (docs/principals.example.yaml): team A in the
// server's account 000000000000, a partner in 111122223333. The same queue
// name in both accounts is two queues; URLs and ARNs carry the account;
// each lists its own; a cross-account call is refused until team A's queue
// policy allows it, and again at once when the policy goes; a dead-letter
// queue of another account is refused; an SNS topic of the partner
// delivers into team A's queue only while A's policy allows its ARN.

const (
	partnerAccount                = "111122223333"
	partnerKey, partnerSecret     = "AKIAPARTNER000000001", "partner-secret"
	partnerQueueURLFragment       = "/" + partnerAccount + "/"
	teamAQueueURLFragment         = "/" + account + "/"
	partnerARNPrefix              = "arn:aws:sqs:us-east-1:" + partnerAccount + ":"
	teamAARNPrefix                = "arn:aws:sqs:us-east-1:" + account + ":"
	crossAccountDeniedFragment    = "is not authorized to perform: sqs:"
	deadLetterOwnerRefusalMessage = "Dead-letter target owner should be same as the source."
)

func TestAccessTwoAccounts(t *testing.T) {
	t.Parallel()
	requireAWS(t)
	creds, err := filepath.Abs(filepath.Join("..", "docs", "principals.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "--auth", "--credentials-file", creds, "--auth-exempt", "health")
	cli := newCLI(t, s)
	a, p := cli.withKeys(teamAKey, teamASecret), cli.withKeys(partnerKey, partnerSecret)

	// The same name in both accounts: two queues, each with its account's URL and ARN.
	aURL := a.createQueue(t, "team-a-shared-name")
	pURL := p.createQueue(t, "team-a-shared-name")
	if !strings.Contains(aURL, teamAQueueURLFragment+"team-a-shared-name") || !strings.Contains(pURL, partnerQueueURLFragment+"team-a-shared-name") {
		t.Fatalf("queue URLs %q and %q", aURL, pURL)
	}
	var attrs struct{ Attributes map[string]string }
	p.ok(t, &attrs, "get-queue-attributes", "--queue-url", pURL, "--attribute-names", "QueueArn")
	if attrs.Attributes["QueueArn"] != partnerARNPrefix+"team-a-shared-name" {
		t.Fatalf("the partner's QueueArn %q", attrs.Attributes["QueueArn"])
	}
	p.ok(t, nil, "send-message", "--queue-url", pURL, "--message-body", "partner's")
	a.ok(t, &attrs, "get-queue-attributes", "--queue-url", aURL, "--attribute-names", "ApproximateNumberOfMessages", "QueueArn")
	if attrs.Attributes["ApproximateNumberOfMessages"] != "0" || attrs.Attributes["QueueArn"] != teamAARNPrefix+"team-a-shared-name" {
		t.Fatalf("team A's queue of the same name: %v", attrs.Attributes)
	}
	// Each lists its own account's queues.
	var list struct{ QueueUrls []string }
	p.ok(t, &list, "list-queues")
	if len(list.QueueUrls) != 1 || list.QueueUrls[0] != pURL {
		t.Errorf("the partner lists %v, want only %s", list.QueueUrls, pURL)
	}
	a.ok(t, &list, "list-queues", "--queue-name-prefix", "team-a-shared")
	if len(list.QueueUrls) != 1 || list.QueueUrls[0] != aURL {
		t.Errorf("team A lists %v, want only %s", list.QueueUrls, aURL)
	}
	// Cross-account: the partner's root may do nothing in account 000000000000
	// that no queue policy allows, and team A nothing in the partner's.
	p.fails(t, "AccessDenied", crossAccountDeniedFragment, "receive-message", "--queue-url", aURL)
	p.fails(t, "AccessDenied", crossAccountDeniedFragment, "get-queue-url", "--queue-name", "team-a-shared-name", "--queue-owner-aws-account-id", account)
	a.fails(t, "AccessDenied", crossAccountDeniedFragment, "purge-queue", "--queue-url", pURL)
	// A dead-letter queue must be of the source's account.
	p.fails(t, "InvalidParameterValue", deadLetterOwnerRefusalMessage, "create-queue", "--queue-name", "src",
		"--attributes", `{"RedrivePolicy":"{\"deadLetterTargetArn\":\"`+teamAARNPrefix+`team-a-shared-name\",\"maxReceiveCount\":\"3\"}"}`)
	// Nothing changed on either side.
	p.ok(t, &attrs, "get-queue-attributes", "--queue-url", pURL, "--attribute-names", "ApproximateNumberOfMessages")
	if attrs.Attributes["ApproximateNumberOfMessages"] != "1" {
		t.Errorf("the partner's queue after team A's refused purge: %v", attrs.Attributes)
	}

	// boto3: cross-account grants by team A's queue policy (and their
	// removal), QueueOwnerAWSAccountId, and SNS across accounts.
	requireBoto3(t)
	r := runTool(t, clientEnv(teamAKey, teamASecret), "python3", filepath.Join("testdata", "accounts_scenarios.py"), s.url)
	if r.code != 0 {
		t.Fatalf("accounts_scenarios.py:\n%s", r)
	}
}
