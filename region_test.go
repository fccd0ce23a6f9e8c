package tidemq

import "testing"

func TestRegionalNamesAndARNs(t *testing.T) {
	const home, acct = "us-east-1", "000000000000"
	for _, tt := range []struct{ name, canonical, arn string }{
		{"orders", "orders", "arn:aws:sqs:us-east-1:000000000000:orders"},
		{"us-east-1/orders", "orders", "arn:aws:sqs:us-east-1:000000000000:orders"},
		{"eu-west-1/orders", "eu-west-1/orders", "arn:aws:sqs:eu-west-1:000000000000:orders"},
		// Another account's queues (account.go).
		{"111122223333:orders", "111122223333:orders", "arn:aws:sqs:us-east-1:111122223333:orders"},
		{"eu-west-1/111122223333:orders", "eu-west-1/111122223333:orders", "arn:aws:sqs:eu-west-1:111122223333:orders"},
	} {
		if got := CanonicalQueueName(tt.name, home); got != tt.canonical {
			t.Errorf("CanonicalQueueName(%q) = %q, want %q", tt.name, got, tt.canonical)
		}
		if got := RegionalQueueARN(home, acct, tt.name); got != tt.arn {
			t.Errorf("RegionalQueueARN(%q) = %q, want %q", tt.name, got, tt.arn)
		}
		if got, ok := QueueNameOfARN(tt.arn, home, acct); !ok || got != tt.canonical {
			t.Errorf("QueueNameOfARN(%q) = %q, %v; want %q", tt.arn, got, ok, tt.canonical)
		}
	}
	for _, arn := range []string{
		"arn:aws:sqs:us-east-1:1111:orders",         // not an account
		"arn:aws:sqs:us-east-1:000000000000:a:b",    // no queue name
		"arn:aws:sns:us-east-1:000000000000:orders", // not a queue
		"arn:aws:sqs:us-east-1:000000000000:a/b",    // no queue name
		"orders",
	} {
		if got, ok := QueueNameOfARN(arn, home, acct); ok {
			t.Errorf("QueueNameOfARN(%q) = %q, want none", arn, got)
		}
	}
}

func TestTagQueueValidateCount(t *testing.T) {
	current := map[string]string{}
	for i := 0; i < MaxTagsPerQueue-1; i++ {
		current[string(rune('A'+i))] = "v"
	}
	ok := TagQueueParams{Tags: map[string]string{"A": "w", "new": "v"}} // one overwrite, one new
	if err := ok.ValidateCount("q", current); err != nil {
		t.Errorf("the %dth tag: %v", MaxTagsPerQueue, err)
	}
	over := TagQueueParams{Tags: map[string]string{"new": "v", "newer": "v"}}
	if err := over.ValidateCount("q", current); !HasCode(err, ErrInvalidParameterValue) || err.Error() != "InvalidParameterValue: Too many tags added for queue q." {
		t.Errorf("the %dth tag: %v", MaxTagsPerQueue+1, err)
	}
}

func TestFormatSequenceNumber(t *testing.T) {
	a, b := FormatSequenceNumber(9), FormatSequenceNumber(10)
	if a != "10000000000000000009" || len(b) != 20 || !(a < b) {
		t.Errorf("FormatSequenceNumber(9), (10) = %q, %q", a, b)
	}
}

func TestAccountQueueNames(t *testing.T) {
	const region, acct = "us-east-1", "000000000000"
	for _, tt := range []struct{ region, account, name, want string }{
		{"", "", "orders", "orders"},
		{region, acct, "orders", "orders"},
		{region, "111122223333", "orders", "111122223333:orders"},
		{"eu-west-1", acct, "orders", "eu-west-1/orders"},
		{"eu-west-1", "111122223333", "ord", "eu-west-1/111122223333:ord"},
	} {
		got := QualifiedQueueName(tt.region, region, tt.account, acct, tt.name)
		if got != tt.want {
			t.Errorf("QualifiedQueueName(%q, %q, %q) = %q, want %q", tt.region, tt.account, tt.name, got, tt.want)
		}
		r, a, n := SplitQualifiedName(got, region, acct)
		wantRegion, wantAccount := tt.region, tt.account
		if wantRegion == "" {
			wantRegion = region
		}
		if wantAccount == "" {
			wantAccount = acct
		}
		if r != wantRegion || a != wantAccount || n != tt.name {
			t.Errorf("SplitQualifiedName(%q) = %q, %q, %q", got, r, a, n)
		}
	}
	for _, tt := range []struct {
		name string
		ok   bool
	}{{"orders", true}, {"111122223333:orders", true}, {"eu-west-1/111122223333:o", true},
		{"11112222333:orders", false}, {"x11122223333:orders", false}, {"EU/orders", false}} {
		p := CreateQueueParams{Name: tt.name}
		if _, _, err := p.Validate(); (err == nil) != tt.ok {
			t.Errorf("CreateQueueParams{Name: %q}.Validate() = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}
