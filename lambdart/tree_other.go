//go:build !linux

package lambdart

// instanceEnv names the environment variable of a runtime's marker (see
// tree_linux.go).
const instanceEnv = "TIDEMQ_FUNCTION_INSTANCE"

// killTree is Linux only: elsewhere the process group is what is killed.
func killTree(pid int, marker string) int { return 0 }
