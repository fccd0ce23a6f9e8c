package tidemq

import "testing"

func TestMD5OfAttributesVectors(t *testing.T) {
	cases := []struct {
		name  string
		attrs map[string]MessageAttributeValue
		want  string
	}{
		{"string", map[string]MessageAttributeValue{"MyAttribute": {DataType: "String", StringValue: "foobar"}}, "adb59cd4678ea5a855436b949cd07ab6"},
		{"binary", map[string]MessageAttributeValue{"attr1": {DataType: "Binary", BinaryValue: []byte("traceparent\x1e00-774062d6c37081a5a0b9b5b88e30627c-2d2482211f6489da-01")}}, "8cbe4db156db8a94db8b801b7addb984"},
		{"lambda event", map[string]MessageAttributeValue{
			"WeeksOn": {DataType: "Number", StringValue: "6"},
			"Author":  {DataType: "String", StringValue: "John Grisham"},
			"Title":   {DataType: "String", StringValue: "The Whistler"},
		}, "d25a6aea97eb8f585bfa92d314504a92"},
		{"trace header", map[string]MessageAttributeValue{"AWSTraceHeader": {DataType: "String", StringValue: "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"}}, "5ae4d5d7636402d80f4eb6d213245a88"},
		{"reference example", map[string]MessageAttributeValue{"color": {DataType: "String", StringValue: "red"}}, "20ca9041878c8c65d5a4bf6eaf446c21"},
		{"empty", nil, ""},
	}
	for _, c := range cases {
		if got := MD5OfAttributes(c.attrs); got != c.want {
			t.Errorf("%s: MD5OfAttributes = %q, want %q", c.name, got, c.want)
		}
	}
	if got := MD5OfBody("hello"); got != "5d41402abc4b2a76b9719d911017c592" {
		t.Errorf("MD5OfBody(hello) = %s", got)
	}
}
