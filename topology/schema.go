package topology

import _ "embed"

// Schema is the JSON Schema of tidemq.yaml.
//
//go:embed schema.json
var Schema []byte
