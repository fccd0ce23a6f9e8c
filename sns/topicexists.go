package sns

// CreateTopic of a name that exists returns the existing topic only when
// the call asks for nothing the topic lacks: every attribute given must
// have the value the topic has (an attribute the topic never set has its
// default), and every tag given must be on the topic with that value.
// Otherwise AWS refuses with InvalidParameter, attributes checked first.

// topicAttrDefaults are the values GetTopicAttributes shows for
// attributes a topic never set.
var topicAttrDefaults = map[string]string{
	"DisplayName":               "",
	"ContentBasedDeduplication": "false",
	"FifoThroughputScope":       "Topic",
}

// sameTopic checks a CreateTopic of an existing topic (as the registry has
// it) with attrs and tags.
func sameTopic(old *Topic, fifo bool, attrs, tags map[string]string) error {
	for k, v := range attrs {
		if k == "FifoTopic" {
			if fifo != old.FIFO {
				return TopicExists()
			}
			continue
		}
		have, ok := old.Attributes[k]
		if !ok {
			have, ok = topicAttrDefaults[k]
		}
		if !ok || have != v {
			return TopicExists()
		}
	}
	for k, v := range tags {
		if w, ok := old.Tags[k]; !ok || w != v {
			return InvalidParameter("Tags", "Topic already exists with different tags")
		}
	}
	return nil
}
