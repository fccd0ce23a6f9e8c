//go:build linux

package lambdart

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// A runtime's descendants can leave its process group: a program that
// calls setsid (a daemonizing helper) is in a session and group of its
// own, and killing the runtime's group leaves it running. So every
// runtime is started with a marker in its environment (instanceEnv, a
// random value of its own), which its descendants inherit, and killing a
// runtime also kills every process of this user that carries its marker
// or descends from it (/proc: environ and the parent links), whatever its
// session. A process that clears its environment and was orphaned before
// the kill escapes: that takes intent, not a stray setsid.

// instanceEnv names the environment variable that carries the marker.
const instanceEnv = "TIDEMQ_FUNCTION_INSTANCE"

// killTree sends SIGKILL to every process descending from pid or carrying
// marker in its environment, pid's own process group aside (signalGroup
// kills that). It returns how many it signalled.
func killTree(pid int, marker string) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	parent := map[int]int{}
	var marked []int
	needle := []byte(instanceEnv + "=" + marker + "\x00")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil || p == os.Getpid() {
			continue
		}
		if stat, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			// pid (comm) state ppid ...: comm may hold spaces and parens.
			if i := bytes.LastIndexByte(stat, ')'); i > 0 {
				if f := strings.Fields(string(stat[i+1:])); len(f) > 1 {
					if pp, err := strconv.Atoi(f[1]); err == nil {
						parent[p] = pp
					}
				}
			}
		}
		if marker != "" {
			if env, err := os.ReadFile("/proc/" + e.Name() + "/environ"); err == nil && bytes.Contains(env, needle) {
				marked = append(marked, p)
			}
		}
	}
	victims := map[int]bool{}
	for _, p := range marked {
		victims[p] = true
	}
	for p := range parent {
		for q, hops := p, 0; q > 1 && hops < 64; q, hops = parent[q], hops+1 {
			if q == pid {
				victims[p] = true
				break
			}
		}
	}
	delete(victims, pid)
	for p := range victims {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	return len(victims)
}
