package placement

import "github.com/tidemq/tidemq"

// The Router's own errors; every other error is its clusters' brokers'.

// otherCluster refuses a request that would join two clusters' queues: a
// RedrivePolicy, a capture tag (tidemq.CaptureExpiredTag), a move task's
// or a move's destination naming queue other on another cluster. param
// and value are the parameter and the value refused. Its advice is what
// Router.sameCluster does: a name placed nowhere yet is placed with the
// queue naming it; a placed name never moves.
func otherCluster(param, value, other string) *tidemq.Error {
	return tidemq.InvalidParameter(param, value, "Queue "+other+" is on another PostgreSQL cluster than this queue: "+
		"a queue and its dead-letter queue or capture queue (or a move's source and destination) must be on one cluster, since a move is one transaction, "+
		"and a queue name stays on the cluster it was first placed on, even once deleted. "+
		"Name a dead-letter or capture queue before creating it (a RedrivePolicy or capture tag naming a queue that does not exist yet places that name with this queue), "+
		"or create the source queue after its dead-letter queue, with its RedrivePolicy: a new queue is placed with the queue it names. "+
		"Here, use a dead-letter or capture queue of a name not used yet.")
}

// unknownCluster is the error of a queue whose placement names a cluster
// this node was not given: the nodes were started with different
// --queue-store lists.
func unknownCluster(queue, id string) *tidemq.Error {
	return tidemq.Errorf(tidemq.ErrInternalFailure,
		"Queue %s is placed on PostgreSQL cluster %s, which this node was not given (--queue-store): every node must be given the same databases.", queue, id)
}
