package brokertest

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tidemq/tidemq"
)

// queueChecks cover the life of a queue: create, look up, list, delete,
// tags and dead-letter source listing (reference §1 and §4).
func queueChecks() []check {
	return []check{
		{"CreateReturnsInfo", func(e *env) {
			info := e.create("orders", nil)
			if info.ARN != "arn:aws:sqs:us-east-1:000000000000:orders" || info.FIFO {
				e.t.Fatalf("CreateQueue(orders) = %+v, want ARN arn:aws:sqs:us-east-1:000000000000:orders, FIFO false", info)
			}
			f := e.create("orders.fifo", nil)
			if f.ARN != "arn:aws:sqs:us-east-1:000000000000:orders.fifo" || !f.FIFO {
				e.t.Fatalf("CreateQueue(orders.fifo) = %+v, want FIFO true", f)
			}
			got, err := e.b.GetQueue(e.ctx, tidemq.GetQueueParams{Name: "orders"})
			e.ok(err, "GetQueue(orders)")
			if *got != *info {
				e.t.Fatalf("GetQueue(orders) = %+v, want %+v", got, info)
			}
		}},
		{"CreateIsIdempotentWithSameAttributes", func(e *env) {
			attrs := map[string]string{tidemq.AttrDelaySeconds: "5", tidemq.AttrVisibilityTimeout: "60"}
			first := e.create("idem", attrs)
			second := e.create("idem", attrs)
			if *first != *second {
				e.t.Fatalf("second CreateQueue returned %+v, first %+v", second, first)
			}
			// Only the given attributes are compared (§5): none given, or a
			// given one equal to the current value, is still the same queue.
			e.create("idem", nil)
			e.create("idem", map[string]string{tidemq.AttrDelaySeconds: "5"})
			e.create("plain", nil)
			e.create("plain", map[string]string{tidemq.AttrVisibilityTimeout: "30"})
			if a := e.attrs("idem"); a[tidemq.AttrDelaySeconds] != "5" || a[tidemq.AttrVisibilityTimeout] != "60" {
				e.t.Fatalf("attributes changed by an idempotent CreateQueue: %v", a)
			}
		}},
		{"CreateWithDifferentAttributesIsQueueNameExists", func(e *env) {
			e.create("taken", map[string]string{tidemq.AttrDelaySeconds: "5"})
			_, err := e.tryCreate("taken", map[string]string{tidemq.AttrDelaySeconds: "6"})
			e.wantCode(err, tidemq.ErrQueueNameExists, "CreateQueue with another DelaySeconds")
			_, err = e.tryCreate("taken", map[string]string{tidemq.AttrVisibilityTimeout: "31"})
			e.wantCode(err, tidemq.ErrQueueNameExists, "CreateQueue with another VisibilityTimeout than the default")
			e.create("taken.fifo", map[string]string{tidemq.AttrContentBasedDeduplication: "true"})
			_, err = e.tryCreate("taken.fifo", map[string]string{tidemq.AttrFifoQueue: "true", tidemq.AttrContentBasedDeduplication: "false"})
			e.wantCode(err, tidemq.ErrQueueNameExists, "CreateQueue of a FIFO queue with another ContentBasedDeduplication")
			if a := e.attrs("taken"); a[tidemq.AttrDelaySeconds] != "5" {
				e.t.Fatalf("a refused CreateQueue changed DelaySeconds to %q", a[tidemq.AttrDelaySeconds])
			}
		}},
		{"InvalidNames", func(e *env) {
			_, err := e.tryCreate("", nil)
			e.wantClientError(err, "CreateQueue with an empty name")
			// (A slash names a queue of another region, "<region>/<name>":
			// RegionalQueues; these are not such names.)
			for _, name := range []string{"has space", "dot.ted", "a/b/c", "/name", "Bad_Region/name", "ünï", "colon:name", strings.Repeat("a", 81)} {
				_, err := e.tryCreate(name, nil)
				e.wantCode(err, tidemq.ErrInvalidParameterValue, "CreateQueue(%q)", name)
			}
			for _, name := range []string{"a", "A-b_9", strings.Repeat("z", 80)} {
				e.create(name, nil)
			}
			// Names are case-sensitive.
			e.create("Case", nil)
			e.create("case", map[string]string{tidemq.AttrDelaySeconds: "3"})
			if e.attrs("Case")[tidemq.AttrDelaySeconds] != "0" {
				e.t.Fatal("queue names are not case-sensitive: Case and case share attributes")
			}
		}},
		{"FIFONameRules", func(e *env) {
			_, err := e.tryCreate("nofifo", map[string]string{tidemq.AttrFifoQueue: "true"})
			e.wantCode(err, tidemq.ErrInvalidParameterValue, "FIFO queue whose name lacks .fifo")
			_, err = e.tryCreate("std.fifo", nil)
			e.wantCode(err, tidemq.ErrInvalidParameterValue, "standard queue whose name ends in .fifo")
			_, err = e.tryCreate("bad name.fifo", map[string]string{tidemq.AttrFifoQueue: "true"})
			e.wantCode(err, tidemq.ErrInvalidParameterValue, "FIFO queue with a space in its name")
			_, err = e.tryCreate(".fifo", map[string]string{tidemq.AttrFifoQueue: "true"})
			e.wantCode(err, tidemq.ErrInvalidParameterValue, "FIFO queue named only .fifo")
			e.create(strings.Repeat("f", 75)+".fifo", nil)
		}},
		{"FifoQueueFalseOnStandardIsInvalidAttributeName", func(e *env) {
			_, err := e.tryCreate("std", map[string]string{tidemq.AttrFifoQueue: "false"})
			e.wantCode(err, tidemq.ErrInvalidAttributeName, "CreateQueue with FifoQueue=false")
			for _, a := range []string{tidemq.AttrContentBasedDeduplication, tidemq.AttrDeduplicationScope, tidemq.AttrFifoThroughputLimit} {
				v := map[string]string{tidemq.AttrContentBasedDeduplication: "true", tidemq.AttrDeduplicationScope: "queue",
					tidemq.AttrFifoThroughputLimit: "perQueue"}[a]
				_, err := e.tryCreate("std", map[string]string{a: v})
				e.wantCode(err, tidemq.ErrInvalidAttributeName, "standard CreateQueue with %s", a)
			}
			if _, err := e.b.GetQueue(e.ctx, tidemq.GetQueueParams{Name: "std"}); !tidemq.HasCode(err, tidemq.ErrQueueDoesNotExist) {
				e.t.Fatalf("a refused CreateQueue left a queue behind: GetQueue = %s", describe(err))
			}
		}},
		{"CreateWithInvalidAttributes", func(e *env) {
			_, err := e.tryCreate("q", map[string]string{"NoSuchAttribute": "1"})
			e.wantCode(err, tidemq.ErrInvalidAttributeName, "CreateQueue with an unknown attribute")
			_, err = e.tryCreate("q", map[string]string{tidemq.AttrVisibilityTimeout: "43201"})
			e.wantCode(err, tidemq.ErrInvalidAttributeValue, "CreateQueue with VisibilityTimeout 43201")
			if _, err := e.b.GetQueue(e.ctx, tidemq.GetQueueParams{Name: "q"}); !tidemq.HasCode(err, tidemq.ErrQueueDoesNotExist) {
				e.t.Fatalf("a refused CreateQueue left a queue behind: GetQueue = %s", describe(err))
			}
		}},
		{"GetMissingQueueIsQueueDoesNotExist", func(e *env) {
			_, err := e.b.GetQueue(e.ctx, tidemq.GetQueueParams{Name: "missing"})
			e.wantCode(err, tidemq.ErrQueueDoesNotExist, "GetQueue(missing)")
			_, err = e.trySend("missing", tidemq.SendEntry{Body: "x"})
			e.wantCode(err, tidemq.ErrQueueDoesNotExist, "SendMessage to a missing queue")
			_, err = e.tryReceive("missing", 1)
			e.wantCode(err, tidemq.ErrQueueDoesNotExist, "ReceiveMessage from a missing queue")
			_, err = e.tryAttrs("missing", tidemq.AttrAll)
			e.wantCode(err, tidemq.ErrQueueDoesNotExist, "GetQueueAttributes of a missing queue")
			e.wantCode(e.trySet("missing", map[string]string{tidemq.AttrDelaySeconds: "1"}), tidemq.ErrQueueDoesNotExist,
				"SetQueueAttributes of a missing queue")
			e.wantCode(e.b.DeleteQueue(e.ctx, tidemq.DeleteQueueParams{Queue: "missing"}), tidemq.ErrQueueDoesNotExist, "DeleteQueue(missing)")
			e.wantCode(e.b.PurgeQueue(e.ctx, tidemq.PurgeQueueParams{Queue: "missing"}), tidemq.ErrQueueDoesNotExist, "PurgeQueue(missing)")
			e.wantCode(e.b.TagQueue(e.ctx, tidemq.TagQueueParams{Queue: "missing", Tags: map[string]string{"k": "v"}}), tidemq.ErrQueueDoesNotExist, "TagQueue(missing)")
			e.wantCode(e.b.UntagQueue(e.ctx, tidemq.UntagQueueParams{Queue: "missing", TagKeys: []string{"k"}}), tidemq.ErrQueueDoesNotExist, "UntagQueue(missing)")
			_, err = e.b.ListQueueTags(e.ctx, tidemq.ListQueueTagsParams{Queue: "missing"})
			e.wantCode(err, tidemq.ErrQueueDoesNotExist, "ListQueueTags(missing)")
			_, err = e.b.ListDeadLetterSourceQueues(e.ctx, tidemq.ListDeadLetterSourceQueuesParams{Queue: "missing"})
			e.wantCode(err, tidemq.ErrQueueDoesNotExist, "ListDeadLetterSourceQueues(missing)")
			e.wantCode(e.b.AddPermission(e.ctx, tidemq.AddPermissionParams{Queue: "missing", Label: "l",
				AccountIDs: []string{AccountID}, Actions: []string{"SendMessage"}}), tidemq.ErrQueueDoesNotExist, "AddPermission(missing)")
			e.wantCode(tryDeleteMissing(e), tidemq.ErrQueueDoesNotExist, "DeleteMessage on a missing queue")
		}},
		{"DeleteQueueRemovesQueueAndMessages", func(e *env) {
			e.create("doomed", nil)
			e.create("keeper", nil)
			e.sendBody("doomed", "one")
			e.sendBody("doomed", "two")
			e.receiveOne("doomed")
			e.ok(e.b.DeleteQueue(e.ctx, tidemq.DeleteQueueParams{Queue: "doomed"}), "DeleteQueue(doomed)")
			_, err := e.b.GetQueue(e.ctx, tidemq.GetQueueParams{Name: "doomed"})
			e.wantCode(err, tidemq.ErrQueueDoesNotExist, "GetQueue after DeleteQueue")
			_, err = e.tryReceive("doomed", 10)
			e.wantCode(err, tidemq.ErrQueueDoesNotExist, "ReceiveMessage after DeleteQueue")
			e.wantCode(e.b.DeleteQueue(e.ctx, tidemq.DeleteQueueParams{Queue: "doomed"}), tidemq.ErrQueueDoesNotExist, "second DeleteQueue")
			res, err := e.b.ListQueues(e.ctx, tidemq.ListQueuesParams{})
			e.ok(err, "ListQueues")
			if !equalStrings(res.Names, []string{"keeper"}) {
				e.t.Fatalf("ListQueues after DeleteQueue = %v, want [keeper]", res.Names)
			}
			// Past the 60 s during which AWS may refuse the name, the name is
			// free again and the new queue starts empty.
			e.advance(61 * time.Second)
			e.create("doomed", nil)
			e.wantCounts("doomed", 0, 0, 0, "re-created queue")
			e.receiveNone("doomed", "re-created queue")
		}},
		{"ListQueuesPrefixAndPaging", func(e *env) {
			want := []string{}
			for i := 0; i < 5; i++ {
				name := fmt.Sprintf("page-%d", i)
				e.create(name, nil)
				want = append(want, name)
			}
			e.create("other", nil)
			e.create("pag", nil)
			all, err := e.b.ListQueues(e.ctx, tidemq.ListQueuesParams{})
			e.ok(err, "ListQueues")
			if len(all.Names) != 7 || all.NextToken != "" {
				e.t.Fatalf("ListQueues without paging = %v (token %q), want 7 names and no token", all.Names, all.NextToken)
			}
			res, err := e.b.ListQueues(e.ctx, tidemq.ListQueuesParams{Prefix: "page-"})
			e.ok(err, "ListQueues(page-)")
			got := append([]string(nil), res.Names...)
			sort.Strings(got)
			if !equalStrings(got, want) || res.NextToken != "" {
				e.t.Fatalf("ListQueues(prefix page-) = %v (token %q), want %v", res.Names, res.NextToken, want)
			}
			seen := map[string]bool{}
			token := ""
			for page := 0; ; page++ {
				if page > 5 {
					e.t.Fatal("ListQueues paging does not end")
				}
				res, err := e.b.ListQueues(e.ctx, tidemq.ListQueuesParams{Prefix: "page-", MaxResults: intp(2), NextToken: token})
				e.ok(err, "ListQueues page %d", page)
				if len(res.Names) > 2 || (page == 0 && len(res.Names) != 2) {
					e.t.Fatalf("ListQueues page %d with MaxResults 2 returned %v", page, res.Names)
				}
				for _, n := range res.Names {
					if seen[n] || !strings.HasPrefix(n, "page-") {
						e.t.Fatalf("ListQueues paging returned %q twice or outside the prefix", n)
					}
					seen[n] = true
				}
				if res.NextToken == "" {
					break
				}
				token = res.NextToken
			}
			if len(seen) != 5 {
				e.t.Fatalf("ListQueues paging returned %d queues, want 5: %v", len(seen), seen)
			}
			none, err := e.b.ListQueues(e.ctx, tidemq.ListQueuesParams{Prefix: "zzz"})
			e.ok(err, "ListQueues(zzz)")
			if len(none.Names) != 0 {
				e.t.Fatalf("ListQueues(prefix zzz) = %v", none.Names)
			}
		}},
		{"Tags", func(e *env) {
			_, err := e.b.CreateQueue(e.ctx, tidemq.CreateQueueParams{Name: "tagged", Tags: map[string]string{"team": "a", "env": "dev"}})
			e.ok(err, "CreateQueue with tags")
			wantTags(e, "tagged", map[string]string{"team": "a", "env": "dev"}, "after CreateQueue")
			e.ok(e.b.TagQueue(e.ctx, tidemq.TagQueueParams{Queue: "tagged", Tags: map[string]string{"team": "b", "cost": "42"}}), "TagQueue")
			wantTags(e, "tagged", map[string]string{"team": "b", "env": "dev", "cost": "42"}, "after TagQueue (overwrite)")
			e.ok(e.b.UntagQueue(e.ctx, tidemq.UntagQueueParams{Queue: "tagged", TagKeys: []string{"env", "nosuchkey"}}), "UntagQueue")
			wantTags(e, "tagged", map[string]string{"team": "b", "cost": "42"}, "after UntagQueue")
			e.ok(e.b.TagQueue(e.ctx, tidemq.TagQueueParams{Queue: "tagged", Tags: map[string]string{"Team": "c"}}), "TagQueue Team")
			wantTags(e, "tagged", map[string]string{"team": "b", "Team": "c", "cost": "42"}, "tag keys are case-sensitive")
			e.create("untagged", nil)
			wantTags(e, "untagged", map[string]string{}, "a queue without tags")
		}},
		{"RegionalQueues", func(e *env) {
			// Each region is a namespace (tidemq.RegionalQueueName): the
			// same name in two regions is two queues, each with its
			// region's ARN; the home region's queues are named plainly.
			const other = "eu-west-1"
			away := tidemq.RegionalQueueName(other, Region, "orders")
			home := e.create("orders", nil)
			info, err := e.tryCreate(away, nil)
			e.ok(err, "CreateQueue(%s)", away)
			if want := tidemq.QueueARN(other, AccountID, "orders"); info.ARN != want || home.ARN != e.arn("orders") {
				e.t.Fatalf("ARNs %q and %q, want %q and %q", home.ARN, info.ARN, e.arn("orders"), want)
			}
			if got := e.attrs(away, tidemq.AttrQueueArn)[tidemq.AttrQueueArn]; got != info.ARN {
				e.t.Fatalf("QueueArn of %s is %q, want %q", away, got, info.ARN)
			}
			e.sendBody(away, "in eu-west-1")
			e.wantCounts("orders", 0, 0, 0, "the home region's orders after a send to eu-west-1's")
			e.wantCounts(away, 1, 0, 0, "eu-west-1's orders")
			if m := e.receiveOne(away); m.Body != "in eu-west-1" {
				e.t.Fatalf("received %q from %s", m.Body, away)
			}
			// The home region written out is the home region.
			if _, err := e.b.GetQueue(e.ctx, tidemq.GetQueueParams{Name: Region + "/orders"}); err != nil {
				e.t.Fatalf("GetQueue(%s/orders): %s", Region, describe(err))
			}
			// ListQueues lists one region: the prefix's, else the home one.
			e.create("other-home", nil)
			e.create(tidemq.RegionalQueueName(other, Region, "other-away"), nil)
			e.create(tidemq.RegionalQueueName("ap-south-1", Region, "orders"), nil)
			list := e.listNames
			if got := list(""); !equalStrings(got, []string{"orders", "other-home"}) {
				e.t.Fatalf("ListQueues() = %v, want the home region's [orders other-home]", got)
			}
			if got := list(other + "/"); !equalStrings(got, []string{other + "/orders", other + "/other-away"}) {
				e.t.Fatalf("ListQueues(%s/) = %v", other, got)
			}
			if got := list(other + "/other"); !equalStrings(got, []string{other + "/other-away"}) {
				e.t.Fatalf("ListQueues(%s/other) = %v", other, got)
			}
			// A dead-letter queue must be in the queue's region.
			_, err = e.tryCreate(tidemq.RegionalQueueName(other, Region, "src"), map[string]string{tidemq.AttrRedrivePolicy: e.redrive("orders", 3)})
			e.wantCode(err, tidemq.ErrInvalidParameterValue, "a RedrivePolicy naming a queue of another region")
			_, err = e.tryCreate(tidemq.RegionalQueueName(other, Region, "src"), map[string]string{tidemq.AttrRedrivePolicy: fmt.Sprintf(
				`{"deadLetterTargetArn":%q,"maxReceiveCount":3}`, info.ARN)})
			e.ok(err, "a RedrivePolicy naming a queue of the same region")
			e.ok(e.b.DeleteQueue(e.ctx, tidemq.DeleteQueueParams{Queue: "orders"}), "DeleteQueue(orders)")
			e.wantCounts(away, 0, 1, 0, "eu-west-1's orders after deleting the home region's")
		}},
		{"AccountQueues", func(e *env) {
			// Each account is a namespace (tidemq.AccountQueueName): the
			// same name in two accounts is two queues, each with its
			// account's ARN; the home account's queues are named plainly.
			const partner = "111122223333"
			theirs := tidemq.AccountQueueName(partner, AccountID, "orders")
			ours := e.create("orders", nil)
			info, err := e.tryCreate(theirs, nil)
			e.ok(err, "CreateQueue(%s)", theirs)
			if want := tidemq.QueueARN(Region, partner, "orders"); info.ARN != want || ours.ARN != e.arn("orders") || info.Name != theirs {
				e.t.Fatalf("ARNs %q and %q (name %q), want %q and %q (%q)", ours.ARN, info.ARN, info.Name, e.arn("orders"), want, theirs)
			}
			if got := e.attrs(theirs, tidemq.AttrQueueArn)[tidemq.AttrQueueArn]; got != info.ARN {
				e.t.Fatalf("QueueArn of %s is %q, want %q", theirs, got, info.ARN)
			}
			e.sendBody(theirs, "for the partner")
			e.wantCounts("orders", 0, 0, 0, "the home account's orders after a send to the partner's")
			e.wantCounts(theirs, 1, 0, 0, "the partner's orders")
			if m := e.receiveOne(theirs); m.Body != "for the partner" {
				e.t.Fatalf("received %q from %s", m.Body, theirs)
			}
			// A region and an account together: eu-west-1/111122223333:orders.
			away := tidemq.QualifiedQueueName("eu-west-1", Region, partner, AccountID, "orders")
			awayInfo, err := e.tryCreate(away, nil)
			e.ok(err, "CreateQueue(%s)", away)
			if want := tidemq.QueueARN("eu-west-1", partner, "orders"); awayInfo.ARN != want {
				e.t.Fatalf("ARN of %s is %q, want %q", away, awayInfo.ARN, want)
			}
			// Not a queue name: an account that is not 12 digits, or a colon in the name.
			for _, bad := range []string{"1234:orders", "abcdefghijkl:orders", partner + ":a:b"} {
				_, err := e.tryCreate(bad, nil)
				e.wantCode(err, tidemq.ErrInvalidParameterValue, "CreateQueue(%s)", bad)
			}
			// ListQueues lists one account: the prefix's, else the home one.
			e.create("other-ours", nil)
			e.create(tidemq.AccountQueueName(partner, AccountID, "other-theirs"), nil)
			e.create(tidemq.AccountQueueName("444455556666", AccountID, "orders"), nil)
			list := e.listNames
			if got := list(""); !equalStrings(got, []string{"orders", "other-ours"}) {
				e.t.Fatalf("ListQueues() = %v, want the home account's [orders other-ours]", got)
			}
			if got := list(partner + ":"); !equalStrings(got, []string{partner + ":orders", partner + ":other-theirs"}) {
				e.t.Fatalf("ListQueues(%s:) = %v", partner, got)
			}
			if got := list(partner + ":other"); !equalStrings(got, []string{partner + ":other-theirs"}) {
				e.t.Fatalf("ListQueues(%s:other) = %v", partner, got)
			}
			if got := list("eu-west-1/" + partner + ":"); !equalStrings(got, []string{away}) {
				e.t.Fatalf("ListQueues(eu-west-1/%s:) = %v", partner, got)
			}
			if got := list("eu-west-1/"); len(got) != 0 {
				e.t.Fatalf("ListQueues(eu-west-1/) = %v, want none of the home account", got)
			}
			// A dead-letter queue must be of the queue's account, existing or not.
			for _, dlq := range []string{e.arn("orders"), tidemq.QueueARN(Region, AccountID, "nosuch")} {
				_, err = e.tryCreate(tidemq.AccountQueueName(partner, AccountID, "src"), map[string]string{tidemq.AttrRedrivePolicy: fmt.Sprintf(
					`{"deadLetterTargetArn":%q,"maxReceiveCount":3}`, dlq)})
				e.wantMessage(err, tidemq.ErrInvalidParameterValue, "Dead-letter target owner should be same as the source.", "a RedrivePolicy naming %s from the partner's account", dlq)
			}
			err = e.trySet("orders", map[string]string{tidemq.AttrRedrivePolicy: fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":3}`, info.ARN)})
			e.wantMessage(err, tidemq.ErrInvalidParameterValue, "Dead-letter target owner should be same as the source.", "SetQueueAttributes naming the partner's queue as DLQ")
			_, err = e.tryCreate(tidemq.AccountQueueName(partner, AccountID, "src"), map[string]string{tidemq.AttrRedrivePolicy: fmt.Sprintf(
				`{"deadLetterTargetArn":%q,"maxReceiveCount":3}`, info.ARN)})
			e.ok(err, "a RedrivePolicy naming a queue of the same account")
			src := tidemq.AccountQueueName(partner, AccountID, "src")
			res, err := e.b.ListDeadLetterSourceQueues(e.ctx, tidemq.ListDeadLetterSourceQueuesParams{Queue: theirs})
			e.ok(err, "ListDeadLetterSourceQueues(%s)", theirs)
			if !equalStrings(res.Names, []string{src}) {
				e.t.Fatalf("ListDeadLetterSourceQueues(%s) = %v, want [%s]", theirs, res.Names, src)
			}
			e.ok(e.b.DeleteQueue(e.ctx, tidemq.DeleteQueueParams{Queue: "orders"}), "DeleteQueue(orders)")
			e.wantCounts(theirs, 0, 1, 0, "the partner's orders after deleting the home account's")
		}},
		{"AtMost50Tags", func(e *env) {
			tags := func(prefix string, n int) map[string]string {
				m := make(map[string]string, n)
				for i := 0; i < n; i++ {
					m[fmt.Sprintf("%s%d", prefix, i)] = "v"
				}
				return m
			}
			const tooMany = "Too many tags added for queue"
			_, err := e.b.CreateQueue(e.ctx, tidemq.CreateQueueParams{Name: "crowded", Tags: tags("k", 51)})
			e.wantMessage(err, tidemq.ErrInvalidParameterValue, tooMany+" crowded.", "CreateQueue with 51 tags")
			if _, err := e.b.GetQueue(e.ctx, tidemq.GetQueueParams{Name: "crowded"}); err == nil {
				e.t.Fatal("a refused CreateQueue with 51 tags created the queue")
			}
			_, err = e.b.CreateQueue(e.ctx, tidemq.CreateQueueParams{Name: "q", Tags: tags("k", 50)})
			e.ok(err, "CreateQueue with 50 tags")
			// Overwriting existing keys adds none.
			e.ok(e.b.TagQueue(e.ctx, tidemq.TagQueueParams{Queue: "q", Tags: tags("k", 10)}), "TagQueue overwriting 10 of 50 tags")
			err = e.b.TagQueue(e.ctx, tidemq.TagQueueParams{Queue: "q", Tags: map[string]string{"k0": "w", "new": "v"}})
			e.wantMessage(err, tidemq.ErrInvalidParameterValue, tooMany+" q.", "TagQueue adding a 51st tag")
			got, err := e.b.ListQueueTags(e.ctx, tidemq.ListQueueTagsParams{Queue: "q"})
			e.ok(err, "ListQueueTags")
			if len(got) != 50 || got["k0"] != "v" {
				e.t.Fatalf("after a refused TagQueue: %d tags, k0=%q; want the 50 unchanged", len(got), got["k0"])
			}
			e.create("small", nil)
			err = e.b.TagQueue(e.ctx, tidemq.TagQueueParams{Queue: "small", Tags: tags("k", 51)})
			e.wantMessage(err, tidemq.ErrInvalidParameterValue, tooMany+" small.", "TagQueue with 51 tags")
		}},
		{"ListDeadLetterSourceQueues", func(e *env) {
			e.create("dlq", nil)
			e.create("src1", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", 3)})
			e.create("src2", nil)
			e.set("src2", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", 5)})
			e.create("unrelated", nil)
			e.create("otherdlq", nil)
			e.create("src3", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("otherdlq", 3)})
			res, err := e.b.ListDeadLetterSourceQueues(e.ctx, tidemq.ListDeadLetterSourceQueuesParams{Queue: "dlq"})
			e.ok(err, "ListDeadLetterSourceQueues(dlq)")
			got := append([]string(nil), res.Names...)
			sort.Strings(got)
			if !equalStrings(got, []string{"src1", "src2"}) {
				e.t.Fatalf("ListDeadLetterSourceQueues(dlq) = %v, want [src1 src2]", res.Names)
			}
			e.set("src1", map[string]string{tidemq.AttrRedrivePolicy: ""})
			res, err = e.b.ListDeadLetterSourceQueues(e.ctx, tidemq.ListDeadLetterSourceQueuesParams{Queue: "dlq"})
			e.ok(err, "ListDeadLetterSourceQueues(dlq)")
			if !equalStrings(res.Names, []string{"src2"}) {
				e.t.Fatalf("after removing src1's RedrivePolicy, ListDeadLetterSourceQueues(dlq) = %v, want [src2]", res.Names)
			}
			res, err = e.b.ListDeadLetterSourceQueues(e.ctx, tidemq.ListDeadLetterSourceQueuesParams{Queue: "unrelated"})
			e.ok(err, "ListDeadLetterSourceQueues(unrelated)")
			if len(res.Names) != 0 {
				e.t.Fatalf("ListDeadLetterSourceQueues(unrelated) = %v, want none", res.Names)
			}
		}},
	}
}

func tryDeleteMissing(e *env) error {
	e.t.Helper()
	return e.tryDelete("missing", "AQEBnotahandle")
}

func wantTags(e *env, q string, want map[string]string, when string) {
	e.t.Helper()
	got, err := e.b.ListQueueTags(e.ctx, tidemq.ListQueueTagsParams{Queue: q})
	e.ok(err, "ListQueueTags(%s)", q)
	if len(got) != len(want) {
		e.t.Fatalf("%s: tags of %s = %v, want %v", when, q, got, want)
	}
	for k, v := range want {
		if got[k] != v {
			e.t.Fatalf("%s: tags of %s = %v, want %v", when, q, got, want)
		}
	}
}

// listNames is ListQueues' names for a prefix, sorted.
func (e *env) listNames(prefix string) []string {
	res, err := e.b.ListQueues(e.ctx, tidemq.ListQueuesParams{Prefix: prefix})
	e.ok(err, "ListQueues(%q)", prefix)
	got := append([]string(nil), res.Names...)
	sort.Strings(got)
	return got
}
