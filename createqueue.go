package tidemq

// CheckExisting applies CreateQueue's rule for a name a queue already
// has: every attribute the request gives (attrs and fifo, as
// CreateQueueParams.Validate returned them) must match the queue's
// (existing, existingFIFO); otherwise QueueNameExists names one that does
// not.
func CheckExisting(attrs map[string]string, fifo bool, existing map[string]string, existingFIFO bool) error {
	for name, v := range attrs {
		if existing[name] != v {
			return QueueExistsWithDifferent(name)
		}
	}
	if fifo != existingFIFO {
		return QueueExistsWithDifferent(AttrFifoQueue)
	}
	return nil
}

// CheckRedrive checks the RedrivePolicy among attrs, the attributes the
// queue name (ARN arn, FIFO when fifo) will have, against the queue it
// targets, which find looks up by ARN (nil when there is none): see
// CheckRedriveTarget; a dead-letter queue of another account than the
// source's is refused before. home is the broker's home region. No
// policy, no check.
func CheckRedrive(attrs map[string]string, home, name, arn string, fifo bool, find func(arn string) (*RedriveTarget, error)) error {
	s := attrs[AttrRedrivePolicy]
	if s == "" {
		return nil
	}
	p, err := ParseRedrivePolicy(s)
	if err != nil {
		return err
	}
	// AWS: a dead-letter queue is of its source's account; another
	// account's is refused whether it exists or not.
	src, _ := ParseARN(arn)
	if dlq, ok := ParseARN(p.DeadLetterTargetARN); ok && dlq.Service == "sqs" && dlq.Account != src.Account {
		return InvalidParameter(AttrRedrivePolicy, s, "Dead-letter target owner should be same as the source.")
	}
	target, err := find(p.DeadLetterTargetARN)
	if err != nil {
		return err
	}
	return CheckRedriveTarget(s, home, name, arn, fifo, target)
}

// Merge returns the attributes a queue has after p: current with the
// given ones, each validated for a queue of its type (fifo), checked
// against the redrive target (checkRedrive, given the merged attributes)
// and together (ValidateMergedQueueAttributes).
func (p *SetQueueAttributesParams) Merge(current map[string]string, fifo bool, checkRedrive func(merged map[string]string) error) (map[string]string, error) {
	attrs, err := ValidateQueueAttributes(p.Attributes, fifo, false)
	merged := MergeQueueAttributes(current, attrs)
	if err == nil {
		err = checkRedrive(merged)
	}
	if err == nil {
		err = ValidateMergedQueueAttributes(merged)
	}
	if err != nil {
		return nil, err
	}
	return merged, nil
}
