package trigger

// Namespace begins every key the manager writes in its store. In the one
// store of `tidemq serve` the engine's and the topic service's keys are
// beside it; the storage package comment lists the namespaces.
const Namespace = "trg/"

// Key layout under Namespace. This is the one place it is written down.
//
//	t/<name>      a trigger's settings, the secrets of its target included (Config, JSON)
//	n/<name>0<node>  one node's share of the trigger's counters (sharedstats.go, JSON)
//	imported      the triggers.json of an older release was imported (upgrade.go)
//
// A trigger's value is the JSON of its Config, as each element of the
// "Triggers" array of the triggers.json that releases before the one store
// kept in the data directory.
const (
	prefixTrigger = "t/"
	prefixStats   = "n/"
	keyImported   = "imported"
)

func triggerKey(name string) []byte { return append([]byte(prefixTrigger), name...) }
