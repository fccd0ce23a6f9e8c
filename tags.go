package tidemq

// ApplyTo adds p's tags to tags, the tags of the queue named queue,
// overwriting keys it already has. It changes nothing and returns
// TooManyTags when the result would hold more than MaxTagsPerQueue.
func (p *TagQueueParams) ApplyTo(queue string, tags map[string]string) error {
	if err := p.ValidateCount(queue, tags); err != nil {
		return err
	}
	for k, v := range p.Tags {
		tags[k] = v
	}
	return nil
}

// ApplyTo removes p's keys from tags; keys it does not have are ignored.
func (p *UntagQueueParams) ApplyTo(tags map[string]string) {
	for _, k := range p.TagKeys {
		delete(tags, k)
	}
}

// CaptureExpiredTag is the queue tag that names where a queue's expired
// messages go instead of being dropped: a queue name or ARN of the same
// type (standard or FIFO). It is a tag, so plain SQS clients can set it
// (aws sqs tag-queue).
const CaptureExpiredTag = "tidemq:capture-expired"
