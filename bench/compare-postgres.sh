#!/usr/bin/env bash
# Compare tidemq on PostgreSQL with 1, 2 and 3 nodes against the embedded
# engine (Pebble), in the same run, with `tidemq bench`, and print a table
# of medians (docs/performance.md quotes it).
#
# Usage: bench/compare-postgres.sh [ROUNDS] [COUNT]
#   ROUNDS  rounds of every configuration, interleaved (default 3)
#   COUNT   messages per scenario and configuration (default 10000)
#
# Both stores are durable: Pebble answers after its fsync, PostgreSQL runs
# with its defaults (fsync on, synchronous_commit on). The script starts a
# throwaway PostgreSQL (initdb/pg_ctl, as the postgres user when run as
# root) in a temporary directory and removes it at exit. Every
# configuration gets a fresh database. With N nodes, N bench processes run
# at once, one per node, the 16 clients split between them; a scenario's
# rate is all the messages they moved over the longest of their times.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
COUNT=${2:-10000}
CLIENTS=16
SCENARIOS=(send send-batch receive receive-batch fifo)

TMP=$(mktemp -d /tmp/tidemq-pgcompare.XXXXXX)
chmod 711 "$TMP" # the postgres user reaches its directory inside
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -n "${PGBIN:-}" ] && "${as_pg[@]}" "$PGBIN/pg_ctl" -D "$TMP/pg/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap cleanup EXIT

go build -o "$TMP/tidemq" ./cmd/tidemq
TIDEMQ="$TMP/tidemq"

PGBIN=$(dirname "$(command -v initdb 2>/dev/null || ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -n 1)")
as_pg=()
mkdir -p "$TMP/pg"
if [ "$(id -u)" = 0 ]; then chown postgres: "$TMP/pg"; as_pg=(runuser -u postgres --); fi
"${as_pg[@]}" "$PGBIN/initdb" -D "$TMP/pg/data" -U postgres -A trust -E UTF8 --no-locale >/dev/null
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PGPORT=$(free_port)
cat >>"$TMP/pg/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $PGPORT
unix_socket_directories = '$TMP/pg'
max_connections = 300
shared_buffers = 256MB
max_wal_size = 1GB
CONF
"${as_pg[@]}" "$PGBIN/pg_ctl" -D "$TMP/pg/data" -l "$TMP/pg/log" -w -t 60 start >/dev/null
PGDSN="postgres://postgres@127.0.0.1:$PGPORT"
PSQL=$(command -v psql || echo "$PGBIN/psql")
psql() { "$PSQL" -q -X -h 127.0.0.1 -p "$PGPORT" -U postgres "$@"; }

# serve NAME ARGS... starts a node and sets URL to its URL.
serve() {
  local name=$1; shift
  : >"$TMP/$name.log"
  "$TIDEMQ" serve --listen 127.0.0.1:0 --no-alarms --log-format json "$@" >/dev/null 2>"$TMP/$name.log" &
  PIDS+=($!)
  local url=""
  for _ in $(seq 200); do
    url=$(sed -n 's/.*"msg":"tidemq listening".*"addr":"\([^"]*\)".*/http:\/\/\1/p' "$TMP/$name.log" | head -n 1)
    [ -n "$url" ] && curl -fs "$url/health" >/dev/null 2>&1 && break
    url=""; sleep 0.1
  done
  [ -n "$url" ] || { echo "node $name did not start:" >&2; cat "$TMP/$name.log" >&2; exit 1; }
  URL=$url
}
stop_all() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  PIDS=()
}

# run CONFIG URL... runs every scenario over the nodes and appends JSON
# lines (one per bench process and scenario) to $TMP/results.
run() {
  local config=$1; shift
  local n=$#
  for sc in "${SCENARIOS[@]}"; do
    local i=0 bp=()
    for url in "$@"; do
      local c=$(( (CLIENTS + n - 1 - i) / n ))
      "$TIDEMQ" bench "$sc" --unsigned --endpoint "$url" --clients "$c" --count $((COUNT / n)) \
        --queue "cmp-$i" --json 2>>"$TMP/bench.err" | sed "s/^{/{\"config\":\"$config\",\"round\":$ROUND,/" >>"$TMP/results" &
      bp+=($!); i=$((i + 1))
    done
    for p in "${bp[@]}"; do wait "$p" || echo "bench failed ($config $sc), see below" >&2; done
  done
}

for ROUND in $(seq "$ROUNDS"); do
  echo "round $ROUND: pebble" >&2
  serve pebble --data-dir "$TMP/pebble-$ROUND"
  run pebble "$URL"; stop_all
  for n in 1 2 3; do
    echo "round $ROUND: postgres, $n node(s)" >&2
    db="cmp_${n}_$ROUND"
    psql -c "CREATE DATABASE $db"
    urls=()
    for i in $(seq "$n"); do
      serve "pg$n-$i" --store "$PGDSN/$db?sslmode=disable" --data-dir "$TMP/pgnode-$n-$i-$ROUND"
      urls+=("$URL")
    done
    run "postgres-$n" "${urls[@]}"; stop_all
    psql -c "DROP DATABASE $db"
  done
done
grep -v -e '^$' -e '^note: no AWS credentials' "$TMP/bench.err" | tail -n 20 >&2 || true

python3 - "$TMP/results" <<'PY'
import json, sys, statistics, collections
runs = collections.defaultdict(lambda: collections.defaultdict(list))  # (config, scenario) -> round -> results
bad = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    runs[(r["config"], r["scenario"])][r["round"]].append(r)
    if r.get("send_messages_per_second"):
        # the send phase before a measured receive phase: all processes
        # sent at once, so their rates add up
        s = dict(r, scenario=r["scenario"] + " (send phase)", messages=r["send_messages_per_second"], elapsed_ns=1e9)
        runs[(r["config"], s["scenario"])][r["round"]].append(s)
    bad += r.get("errors", 0) + r.get("lost", 0) + r.get("duplicates", 0)
configs = ["pebble", "postgres-1", "postgres-2", "postgres-3"]
scenarios = []
for (_, s) in runs:
    if s not in scenarios:
        scenarios.append(s)
def rate(rs):
    return sum(r["messages"] for r in rs) / max(r["elapsed_ns"] for r in rs) * 1e9
print("| scenario | " + " | ".join(configs) + " | PG 1 node / Pebble | PG 3 / PG 1 |")
print("|---|" + "---|" * (len(configs) + 2))
for s in scenarios:
    med = {}
    for c in configs:
        rates = [rate(rs) for rs in runs[(c, s)].values()]
        med[c] = statistics.median(rates) if rates else float("nan")
    cells = [f"{med[c]:,.0f}" for c in configs]
    print(f"| {s} | " + " | ".join(cells) + f" | {med['postgres-1']/med['pebble']:.2f}× | {med['postgres-3']/med['postgres-1']:.2f}× |")
print(f"\nmessages per second, median of {len(next(iter(runs.values())))} rounds; errors + lost + duplicated over every run: {bad}")
PY
