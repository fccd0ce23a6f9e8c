// Package server is the one place where tidemq's HTTP surface is put
// together from its parts: the route table with each route's access rule
// (Mount), the SQS and SNS protocols behind one handler (Protocols), the
// health probe (Health) and the targets a topology is applied to
// (TopologyTargets). `tidemq serve` (cmd/tidemq) and tidemqtest both go
// through it, so that a server started inside a test answers exactly what
// the binary answers; a route or a protocol wired anywhere else exists in
// one of them only.
//
// Opening the parts (the broker, the topic service, the triggers, the
// alarms) stays with the callers: the binary decides it from its flags
// (data directory, PostgreSQL, the cluster's leases, imports from older
// releases), a test from its options (memory or a temporary directory, a
// fake clock).
package server
