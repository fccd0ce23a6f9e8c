package sqs

import (
	"github.com/tidemq/tidemq"
)

// The queue actions: lifecycle, listing, attributes, tags and permissions.

func (c *call) broker() tidemq.Broker { return c.h.cfg.Broker }

func (c *call) createQueue(in *createQueueInput) (output, error) {
	name, err := required(in.QueueName, "QueueName")
	if err != nil {
		return nil, err
	}
	info, err := c.broker().CreateQueue(c.r.Context(), tidemq.CreateQueueParams{
		Name: name, Attributes: in.Attributes, Tags: in.Tags,
	})
	if err != nil {
		return nil, err
	}
	return &queueURLOutput{QueueURL: c.queueURL(info.Name)}, nil
}

func (c *call) getQueueURL(in *getQueueURLInput) (output, error) {
	name, err := required(in.QueueName, "QueueName")
	if err != nil {
		return nil, err
	}
	if in.QueueOwnerAWSAccountID != "" && in.QueueOwnerAWSAccountID != c.h.cfg.AccountID {
		return nil, tidemq.NonExistentQueue()
	}
	info, err := c.broker().GetQueue(c.r.Context(), tidemq.GetQueueParams{Name: name})
	if err != nil {
		return nil, err
	}
	return &queueURLOutput{QueueURL: c.queueURL(info.Name)}, nil
}

func (c *call) deleteQueue(in *queueInput) (output, error) {
	name, err := c.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	return nil, c.broker().DeleteQueue(c.r.Context(), tidemq.DeleteQueueParams{Queue: name})
}

func (c *call) purgeQueue(in *queueInput) (output, error) {
	name, err := c.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	return nil, c.broker().PurgeQueue(c.r.Context(), tidemq.PurgeQueueParams{Queue: name})
}

// checkMaxResults checks the MaxResults of the listing actions (1 to 1000)
// and returns it as the broker wants it (0: no paging).
func checkMaxResults(n *int) (int, error) {
	if n == nil {
		return 0, nil
	}
	if *n < 1 || *n > tidemq.MaxListQueuesResults {
		return 0, tidemq.InvalidParameter("MaxResults", *n, "MaxResults must be an integer between 1 and 1000.")
	}
	return *n, nil
}

func (c *call) listQueues(in *listQueuesInput) (output, error) {
	max, err := checkMaxResults(in.MaxResults)
	if err != nil {
		return nil, err
	}
	res, err := c.broker().ListQueues(c.r.Context(), tidemq.ListQueuesParams{
		Prefix: in.QueueNamePrefix, MaxResults: max, NextToken: in.NextToken,
	})
	if err != nil {
		return nil, err
	}
	return &listQueuesOutput{QueueURLs: c.queueURLs(res.Names), NextToken: res.NextToken}, nil
}

func (c *call) listDeadLetterSourceQueues(in *listDeadLetterSourceQueuesInput) (output, error) {
	name, err := c.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	max, err := checkMaxResults(in.MaxResults)
	if err != nil {
		return nil, err
	}
	res, err := c.broker().ListDeadLetterSourceQueues(c.r.Context(), tidemq.ListDeadLetterSourceQueuesParams{
		Queue: name, MaxResults: max, NextToken: in.NextToken,
	})
	if err != nil {
		return nil, err
	}
	return &listDeadLetterSourceQueuesOutput{QueueURLs: c.queueURLs(res.Names), NextToken: res.NextToken}, nil
}

func (c *call) getQueueAttributes(in *getQueueAttributesInput) (output, error) {
	name, err := c.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	for _, n := range in.AttributeNames {
		if !tidemq.IsQueueAttributeName(n) {
			return nil, tidemq.Errorf(tidemq.ErrInvalidAttributeName, "Unknown Attribute %s.", n)
		}
	}
	attrs, err := c.broker().GetQueueAttributes(c.r.Context(), tidemq.GetQueueAttributesParams{
		Queue: name, Names: in.AttributeNames,
	})
	if err != nil {
		return nil, err
	}
	return &getQueueAttributesOutput{Attributes: attrs}, nil
}

func (c *call) setQueueAttributes(in *setQueueAttributesInput) (output, error) {
	name, err := c.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	if in.Attributes == nil {
		return nil, tidemq.MissingParameter("Attributes")
	}
	return nil, c.broker().SetQueueAttributes(c.r.Context(), tidemq.SetQueueAttributesParams{
		Queue: name, Attributes: in.Attributes,
	})
}

func (c *call) tagQueue(in *tagQueueInput) (output, error) {
	name, err := c.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	if in.Tags == nil {
		return nil, tidemq.MissingParameter("Tags")
	}
	return nil, c.broker().TagQueue(c.r.Context(), tidemq.TagQueueParams{Queue: name, Tags: in.Tags})
}

func (c *call) untagQueue(in *untagQueueInput) (output, error) {
	name, err := c.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	if in.TagKeys == nil {
		return nil, tidemq.MissingParameter("TagKeys")
	}
	return nil, c.broker().UntagQueue(c.r.Context(), tidemq.UntagQueueParams{Queue: name, TagKeys: in.TagKeys})
}

func (c *call) listQueueTags(in *queueInput) (output, error) {
	name, err := c.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	tags, err := c.broker().ListQueueTags(c.r.Context(), tidemq.ListQueueTagsParams{Queue: name})
	if err != nil {
		return nil, err
	}
	return &listQueueTagsOutput{Tags: tags}, nil
}

func (c *call) addPermission(in *addPermissionInput) (output, error) {
	name, err := c.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	label, err := required(in.Label, "Label")
	if err != nil {
		return nil, err
	}
	if len(in.AWSAccountIDs) == 0 {
		return nil, tidemq.MissingParameter("AWSAccountIds")
	}
	if len(in.Actions) == 0 {
		return nil, tidemq.MissingParameter("Actions")
	}
	return nil, c.broker().AddPermission(c.r.Context(), tidemq.AddPermissionParams{
		Queue: name, Label: label, AccountIDs: in.AWSAccountIDs, Actions: in.Actions,
	})
}

func (c *call) removePermission(in *removePermissionInput) (output, error) {
	name, err := c.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	label, err := required(in.Label, "Label")
	if err != nil {
		return nil, err
	}
	return nil, c.broker().RemovePermission(c.r.Context(), tidemq.RemovePermissionParams{Queue: name, Label: label})
}
