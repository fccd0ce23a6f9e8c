package sns

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/filterpolicy"
)

// Filter policy scopes.
const (
	ScopeMessageAttributes = "MessageAttributes"
	ScopeMessageBody       = "MessageBody"
)

// FilterPolicy is a compiled subscription filter policy: a
// filterpolicy.Policy in its scope.
type FilterPolicy struct {
	p     *filterpolicy.Policy
	scope string
}

// CompileFilterPolicy parses and checks a filter policy for a scope
// ("" means MessageAttributes).
func CompileFilterPolicy(policy, scope string) (*FilterPolicy, error) {
	if scope == "" {
		scope = ScopeMessageAttributes
	}
	if scope != ScopeMessageAttributes && scope != ScopeMessageBody {
		return nil, InvalidParameter("Attributes", "FilterPolicyScope: Invalid value ["+scope+"]. Please use either MessageBody or MessageAttributes")
	}
	d := filterpolicy.SNSAttributes
	if scope == ScopeMessageBody {
		d = filterpolicy.SNSBody
	}
	p, err := filterpolicy.Compile(policy, d)
	if errors.Is(err, filterpolicy.ErrNestedAttributes) {
		return nil, &tidemq.Error{Code: tidemq.ErrSNSInvalidParameter,
			Message: "Invalid parameter: Filter policy scope MessageAttributes does not support nested filter policy"}
	}
	if err != nil {
		return nil, &tidemq.Error{Code: tidemq.ErrSNSInvalidParameter, Message: "Invalid parameter: FilterPolicy: " + err.Error()}
	}
	return &FilterPolicy{p: p, scope: scope}, nil
}

// MatchAttributes reports whether message attributes match the policy
// (MessageAttributes scope). Binary attributes are ignored.
func (p *FilterPolicy) MatchAttributes(attrs map[string]Attribute) bool {
	obj := make(map[string]any, len(attrs))
	for name, a := range attrs {
		switch {
		case strings.HasPrefix(a.DataType, "String.Array"):
			var arr []any
			if json.Unmarshal([]byte(a.StringValue), &arr) == nil {
				obj[name] = arr
			} else {
				obj[name] = a.StringValue
			}
		case strings.HasPrefix(a.DataType, "Number"):
			f, err := strconv.ParseFloat(a.StringValue, 64)
			if err == nil {
				obj[name] = f
			} else {
				obj[name] = a.StringValue
			}
		case strings.HasPrefix(a.DataType, "String"):
			obj[name] = a.StringValue
		}
	}
	return p.p.Match(obj)
}

// MatchBody reports whether a message body matches the policy (MessageBody
// scope). A body that is not a JSON object matches nothing.
func (p *FilterPolicy) MatchBody(body string) bool {
	var obj map[string]any
	if json.Unmarshal([]byte(body), &obj) != nil || obj == nil {
		return false
	}
	return p.p.Match(obj)
}

// Match applies the policy in its scope.
func (p *FilterPolicy) Match(body string, attrs map[string]Attribute) bool {
	if p.scope == ScopeMessageBody {
		return p.MatchBody(body)
	}
	return p.MatchAttributes(attrs)
}

// Attribute is an SNS message attribute. BinaryValue holds raw bytes.
type Attribute struct {
	DataType    string
	StringValue string
	BinaryValue []byte
}

// envelopeValue is the attribute's Value in the delivery envelope.
func (a Attribute) envelopeValue() string {
	if strings.HasPrefix(a.DataType, "Binary") {
		return base64.StdEncoding.EncodeToString(a.BinaryValue)
	}
	return a.StringValue
}
