package sns

import (
	"encoding/json"
	"strings"
)

// AddPermission and RemovePermission edit a topic's Policy attribute: a
// statement named by its label (Sid) allows accounts some SNS actions on the
// topic. tidemq keeps the statements, as GetTopicAttributes shows them;
// under --auth with principals they decide calls on the topic as on AWS
// (package authz reads them through TopicPolicy).

// AddPermission adds the statement label to the topic's policy, allowing
// accounts (AWS account ids) the actions (SNS action names, e.g. Publish).
func (s *Service) AddPermission(topicARN, label string, accounts, actions []string) error {
	if _, err := s.topic("TopicArn", topicARN); err != nil {
		return err
	}
	switch {
	case label == "":
		return InvalidParameter("Label", "")
	case len(accounts) == 0:
		return InvalidParameter("AWSAccountId", "")
	case len(actions) == 0:
		return InvalidParameter("ActionName", "")
	}
	principals := make([]string, len(accounts))
	for i, a := range accounts {
		principals[i] = "arn:aws:iam::" + a + ":root"
	}
	names := make([]string, len(actions))
	for i, a := range actions {
		names[i] = "SNS:" + strings.TrimPrefix(a, "SNS:")
	}
	return s.editPolicy(topicARN, func(stmts []map[string]any) ([]map[string]any, error) {
		for _, st := range stmts {
			if st["Sid"] == label {
				return nil, InvalidParameter("Label", "Statement "+label+" already exists")
			}
		}
		return append(stmts, map[string]any{
			"Sid": label, "Effect": "Allow", "Principal": map[string]any{"AWS": principals},
			"Action": names, "Resource": topicARN,
		}), nil
	})
}

// RemovePermission removes the statement label from the topic's policy.
func (s *Service) RemovePermission(topicARN, label string) error {
	if _, err := s.topic("TopicArn", topicARN); err != nil {
		return err
	}
	if label == "" {
		return InvalidParameter("Label", "")
	}
	return s.editPolicy(topicARN, func(stmts []map[string]any) ([]map[string]any, error) {
		out := stmts[:0]
		for _, st := range stmts {
			if st["Sid"] != label {
				out = append(out, st)
			}
		}
		return out, nil
	})
}

// editPolicy rewrites the statements of a topic's policy (the default one
// while it has none of its own).
func (s *Service) editPolicy(topicARN string, edit func([]map[string]any) ([]map[string]any, error)) error {
	return s.store.updateTopic(topicARN, func(t *Topic) error {
		text := t.Attributes["Policy"]
		if text == "" {
			text = s.defaultPolicy(t.ARN)
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(text), &doc); err != nil || doc == nil {
			return InvalidParameter("Policy", "the topic's policy is not a JSON object")
		}
		var stmts []map[string]any
		if raw, err := json.Marshal(doc["Statement"]); err == nil {
			_ = json.Unmarshal(raw, &stmts)
		}
		stmts, err := edit(stmts)
		if err != nil {
			return err
		}
		doc["Statement"] = stmts
		b, err := json.Marshal(doc)
		if err != nil {
			return err
		}
		if t.Attributes == nil {
			t.Attributes = map[string]string{}
		}
		t.Attributes["Policy"] = string(b)
		return nil
	})
}
