// Package tidemq holds the domain of tidemq, a self-hosted message queue that
// speaks the Amazon SQS wire protocols.
//
// The types here are shared by every layer: queue and message attributes,
// redrive policies, the error catalogue, the Clock that every deadline reads,
// and the Broker interface that the engine (and later other backends)
// implement, with the rules a Broker holds its inputs to (the params types'
// Validate methods and the Validate* functions), so that every backend
// enforces them alike.
//
// It is also the broker core: the decisions both brokers make (the receipt
// handle codec and what a handle may do, ChangeMessageVisibility's rules,
// the move rules, a message move task's steps, the history events, every
// error text) and QueueCore, which implements the calls on a queue's record
// over a broker's QueueDriver. A broker keeps storage and the orchestration
// of its message operations. Nothing in this package knows about HTTP or
// about disks: transports live in api/, storage in storage/, and the brokers
// in engine/ and postgres/.
package tidemq
