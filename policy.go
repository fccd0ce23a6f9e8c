package tidemq

import (
	"encoding/json"
	"strings"
)

// The queue policy that AddPermission and RemovePermission edit, in the
// shape AWS writes it: Version 2008-10-17, Id "<queue ARN>/SQSDefaultPolicy",
// one statement per label, and a single principal or action as a string,
// several as a list.

// policyVersion is the Version AWS writes in the policy AddPermission
// creates.
const policyVersion = "2008-10-17"

type policyDocument struct {
	Version   string            `json:"Version"`
	ID        string            `json:"Id,omitempty"`
	Statement []policyStatement `json:"Statement"`
}

type policyStatement struct {
	Sid       string          `json:"Sid"`
	Effect    string          `json:"Effect"`
	Principal json.RawMessage `json:"Principal"`
	Action    any             `json:"Action"`
	Resource  string          `json:"Resource"`
}

// parsePolicy reads a queue's Policy attribute ("" for none).
func parsePolicy(policy, queueARN string) (policyDocument, error) {
	doc := policyDocument{Version: policyVersion, ID: queueARN + "/SQSDefaultPolicy"}
	if policy != "" {
		if err := json.Unmarshal([]byte(policy), &doc); err != nil {
			return doc, InvalidParameter("Policy", policy, "The queue's policy cannot be edited with AddPermission/RemovePermission because it is not in the standard form.")
		}
	}
	return doc, nil
}

// String is the Policy attribute of doc: "" when it has no statements.
func (doc policyDocument) String() string {
	if len(doc.Statement) == 0 {
		return ""
	}
	b, _ := json.Marshal(doc)
	return string(b)
}

// oneOrList is AWS's shape of principals and actions: one as a string,
// several as a list.
func oneOrList(s []string) any {
	if len(s) == 1 {
		return s[0]
	}
	return s
}

// AddTo returns a queue's Policy attribute (policy, "" for none; queueARN
// is the queue's) with p's statement added: InvalidParameterValue when the
// label is taken or the policy is not a document these calls can edit.
// Call it after Validate.
func (p *AddPermissionParams) AddTo(policy, queueARN string) (string, error) {
	doc, err := parsePolicy(policy, queueARN)
	if err != nil {
		return "", err
	}
	for _, s := range doc.Statement {
		if s.Sid == p.Label {
			return "", InvalidParameter("Label", p.Label, "Already exists.")
		}
	}
	principals := make([]string, len(p.AccountIDs))
	for i, id := range p.AccountIDs {
		principals[i] = "arn:aws:iam::" + id + ":root"
	}
	actions := make([]string, len(p.Actions))
	for i, a := range p.Actions {
		if !strings.HasPrefix(a, "SQS:") {
			a = "SQS:" + a
		}
		actions[i] = a
	}
	principal, _ := json.Marshal(map[string]any{"AWS": oneOrList(principals)})
	doc.Statement = append(doc.Statement, policyStatement{
		Sid: p.Label, Effect: "Allow", Principal: principal, Action: oneOrList(actions), Resource: queueARN,
	})
	return doc.String(), nil
}

// RemoveFrom returns a queue's Policy attribute (policy; queueARN is the
// queue's) without the statement labelled p.Label ("" when none is left):
// InvalidParameterValue when there is no such statement.
func (p *RemovePermissionParams) RemoveFrom(policy, queueARN string) (string, error) {
	doc, err := parsePolicy(policy, queueARN)
	if err != nil {
		return "", err
	}
	for i, s := range doc.Statement {
		if s.Sid == p.Label {
			doc.Statement = append(doc.Statement[:i], doc.Statement[i+1:]...)
			return doc.String(), nil
		}
	}
	return "", InvalidParameter("Label", p.Label, "can't find label.")
}
