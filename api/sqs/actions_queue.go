package sqs

import (
	"strings"

	"github.com/tidemq/tidemq"
)

// The queue actions: lifecycle, listing, attributes, tags and permissions.
// They decode and resolve queue URLs; the broker judges the requests.

func (c *call) broker() tidemq.Broker { return c.h.cfg.Broker }

func (c *call) createQueue(in *createQueueInput) (output, error) {
	if strings.ContainsAny(in.QueueName, "/:") { // a slash would name another region, a colon another account (regional)
		return nil, tidemq.ValidateQueueName(in.QueueName, strings.EqualFold(in.Attributes[tidemq.AttrFifoQueue], "true"))
	}
	if err := c.authorize(c.regional(in.QueueName)); err != nil {
		return nil, err
	}
	info, err := c.broker().CreateQueue(c.r.Context(), tidemq.CreateQueueParams{
		Name: c.regional(in.QueueName), Attributes: in.Attributes, Tags: in.Tags,
	})
	if err != nil {
		return nil, err
	}
	return &queueURLOutput{QueueURL: c.queueURL(info.Name)}, nil
}

func (c *call) getQueueURL(in *getQueueURLInput) (output, error) {
	if strings.ContainsAny(in.QueueName, "/:") {
		return nil, tidemq.NonExistentQueue()
	}
	if err := (&tidemq.GetQueueParams{Name: in.QueueName}).Validate(); err != nil {
		return nil, err // judged before the name is qualified with an account
	}
	// QueueOwnerAWSAccountId names the account whose queue is asked for
	// (a cross-account call, decided so); without it, the caller's. An
	// owner that is no account owns no queue.
	account := c.account
	if in.QueueOwnerAWSAccountID != "" {
		account = in.QueueOwnerAWSAccountID
	}
	if !tidemq.ValidAccount(account) {
		return nil, tidemq.NonExistentQueue()
	}
	name := c.qualified(account, in.QueueName)
	if err := c.authorize(name); err != nil {
		return nil, err
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

func (c *call) listQueues(in *listQueuesInput) (output, error) {
	if strings.ContainsAny(in.QueueNamePrefix, "/:") { // no queue name has one
		return &listQueuesOutput{}, nil
	}
	res, err := c.broker().ListQueues(c.r.Context(), tidemq.ListQueuesParams{
		Prefix: c.regional(in.QueueNamePrefix), MaxResults: in.MaxResults, NextToken: in.NextToken,
	})
	if err != nil {
		return nil, err
	}
	return &listQueuesOutput{QueueURLs: c.queueURLs(c.visible(res.Names)), NextToken: res.NextToken}, nil
}

func (c *call) listDeadLetterSourceQueues(in *listDeadLetterSourceQueuesInput) (output, error) {
	name, err := c.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	res, err := c.broker().ListDeadLetterSourceQueues(c.r.Context(), tidemq.ListDeadLetterSourceQueuesParams{
		Queue: name, MaxResults: in.MaxResults, NextToken: in.NextToken,
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
	return nil, c.broker().SetQueueAttributes(c.r.Context(), tidemq.SetQueueAttributesParams{
		Queue: name, Attributes: in.Attributes,
	})
}

func (c *call) tagQueue(in *tagQueueInput) (output, error) {
	name, err := c.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	return nil, c.broker().TagQueue(c.r.Context(), tidemq.TagQueueParams{Queue: name, Tags: in.Tags})
}

func (c *call) untagQueue(in *untagQueueInput) (output, error) {
	name, err := c.queue(in.QueueURL)
	if err != nil {
		return nil, err
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
	return nil, c.broker().AddPermission(c.r.Context(), tidemq.AddPermissionParams{
		Queue: name, Label: in.Label, AccountIDs: in.AWSAccountIDs, Actions: in.Actions,
	})
}

func (c *call) removePermission(in *removePermissionInput) (output, error) {
	name, err := c.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	return nil, c.broker().RemovePermission(c.r.Context(), tidemq.RemovePermissionParams{Queue: name, Label: in.Label})
}
