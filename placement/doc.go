// Package placement spreads queues over several brokers, one per
// PostgreSQL cluster, behind one tidemq.Broker (Router): each queue lives
// whole on one cluster, named by a placement table in the home database,
// and every request on a queue runs on that queue's cluster.
//
// What a client sees does not change: queue URLs, ARNs and receipt
// handles name no cluster; ListQueues lists every cluster's queues.
//
// The rules kept here:
//
//   - A queue name is placed once and for good (Table): a new name goes to
//     its dead-letter queue's cluster when its RedrivePolicy names one that
//     is placed, else to its capture queue's, else to the cluster with the
//     fewest names placed; and only once its create's joins hold there. A
//     name placed nowhere that a RedrivePolicy or capture tag names
//     is placed then with the queue naming it, so that the queue created
//     by that name later is there. A queue deleted and created again comes
//     back where it was.
//   - A queue and its dead-letter queue are on one cluster, because a
//     dead-letter move is one transaction (never in both queues, never in
//     neither). A RedrivePolicy, a move task or a MoveMessages that would
//     join two clusters is refused with InvalidParameterValue, saying so.
//   - The leader's fence (tidemq.Fence) is checked in the write's own
//     transaction only on the home cluster, where the leases are. On any
//     other cluster the Router checks it against the home database just
//     before the write (Options.CheckFence), and a long poll again before
//     each look after a wake (tidemq.WithFenceCheck): the weaker check the
//     alarm webhooks get, since a leader paused between a check and the
//     write can still make that one write.
//
// docs/scaling.md says what is built and what is on paper (migrating a
// queue from one cluster to another is not built).
package placement
