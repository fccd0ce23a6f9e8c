# Helpers of the bench/compare-*.sh scripts (sourced, not run).

# use_tmp PREFIX makes TMP, a temporary directory removed at exit with the
# server SERVER (see start_embedded) stopped.
use_tmp() {
  TMP=$(mktemp -d "/tmp/$1.XXXXXX")
  SERVER=""
  trap 'if [ -n "$SERVER" ]; then kill "$SERVER" 2>/dev/null || true; fi; rm -rf "$TMP"' EXIT
}

# free_port prints a free TCP port of 127.0.0.1.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# build_at COMMIT DIR OUT builds `tidemq` of COMMIT into OUT, from `git
# archive` into DIR, leaving the worktree alone.
build_at() {
  mkdir -p "$2"
  git archive "$1" | tar -x -C "$2"
  (cd "$2" && go build -o "$3" ./cmd/tidemq)
}

# start_embedded BIN DATA PORT LOG starts `BIN serve` on a fresh embedded
# store in DATA, sets SERVER to its pid and waits until it answers /health.
start_embedded() {
  "$1" serve --data-dir "$2" --listen "127.0.0.1:$3" >"$4" 2>&1 &
  SERVER=$!
  for _ in $(seq 100); do
    curl -fs "http://127.0.0.1:$3/health" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
}

# stop_server stops SERVER and waits for it.
stop_server() {
  kill "$SERVER"
  wait "$SERVER" 2>/dev/null || true
  SERVER=""
}
