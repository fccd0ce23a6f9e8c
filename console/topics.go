package console

import (
	"net/http"
	"net/url"
	"sort"
)

// topicView is a topic with its subscriptions. Confirmation tokens are not
// shown, nor the password of an HTTP endpoint's userinfo.
type topicView struct {
	Name          string             `json:"name"`
	ARN           string             `json:"arn"`
	FIFO          bool               `json:"fifo"`
	Subscriptions []subscriptionView `json:"subscriptions"`
}

type subscriptionView struct {
	ARN      string `json:"arn"`
	Protocol string `json:"protocol"`
	Endpoint string `json:"endpoint"`
	Pending  bool   `json:"pending,omitempty"`
	// RawMessageDelivery, FilterPolicy and RedrivePolicy are the
	// subscription attributes that change what reaches the endpoint.
	RawMessageDelivery bool   `json:"rawMessageDelivery,omitempty"`
	FilterPolicy       string `json:"filterPolicy,omitempty"`
	RedrivePolicy      string `json:"redrivePolicy,omitempty"`
}

func (c *Console) topics(w http.ResponseWriter, r *http.Request) {
	out := []topicView{}
	if c.o.Topics != nil {
		for _, t := range c.o.Topics.ListTopics() {
			if c.o.VisibleTopic != nil && !c.o.VisibleTopic(r, t.ARN) {
				continue
			}
			v := topicView{Name: t.Name, ARN: t.ARN, FIFO: t.FIFO, Subscriptions: []subscriptionView{}}
			subs, err := c.o.Topics.ListSubscriptions(t.ARN)
			if err != nil { // deleted meanwhile
				continue
			}
			for _, s := range subs {
				endpoint := s.Endpoint
				if s.IsHTTP() {
					endpoint = redactURL(endpoint)
				}
				v.Subscriptions = append(v.Subscriptions, subscriptionView{
					ARN: s.ARN, Protocol: s.Protocol, Endpoint: endpoint, Pending: s.Pending,
					RawMessageDelivery: s.Attributes["RawMessageDelivery"] == "true",
					FilterPolicy:       s.Attributes["FilterPolicy"], RedrivePolicy: s.Attributes["RedrivePolicy"],
				})
			}
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	writeJSON(w, http.StatusOK, map[string]any{"topics": out, "enabled": c.o.Topics != nil})
}

// redactURL hides the password of an endpoint URL's userinfo.
func redactURL(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return endpoint
	}
	return u.Redacted()
}
