#!/usr/bin/env bash
# Compare tidemq on PostgreSQL with 1, 2 and 3 nodes against the embedded
# engine (Pebble) and against what PostgreSQL itself does with the same
# writes (the pgbench ceiling), in the same run, and print tables of
# medians (docs/performance.md quotes them).
#
# Usage: bench/compare-postgres.sh [ROUNDS] [COUNT] [BASE]
#   ROUNDS  rounds of every configuration, interleaved (default 3)
#   COUNT   messages per scenario and configuration (default 10000)
#   BASE    a commit to measure too, on PostgreSQL with one node (the
#           "before" of a change); built from `git archive`, so the
#           worktree is left alone. Default: none. It runs before the
#           head in odd rounds and after it in even ones.
#
# Environment: NODES, the node counts measured on PostgreSQL (default
# "1 2 3"); LIMIT_BYTES, when set, measures one node more with
# --max-queue-bytes LIMIT_BYTES (config limited-1: pick a limit the run
# never reaches, to measure what the check costs); BENCH_FLAGS, more flags
# for every `tidemq bench` run (the head's binary drives all of them), e.g.
# "--max-receive-count 1" to give every queue a dead-letter queue; PG_CONF,
# more postgresql.conf lines for the throwaway server (e.g.
# "autovacuum_naptime = 5s"), printed at the end.
#
# Both stores are durable: Pebble answers after its fsync, PostgreSQL runs
# with its defaults (fsync on, synchronous_commit on). The script starts a
# throwaway PostgreSQL (initdb/pg_ctl, as the postgres user when run as
# root) in a temporary directory and removes it at exit. Every
# configuration gets a fresh database. With N nodes, N bench processes run
# at once, one per node, the 16 clients split between them; a scenario's
# rate is all the messages they moved over the longest of their times.
# The nodes' CPU time (user + system, from /proc) over all the scenarios
# is reported per configuration, and per message against Pebble's.
#
# The ceiling is pgbench on a fresh database of the same server, 16
# clients, 256-byte rows, in three scripts: an insert of one row, an
# insert of 10 rows, and a 10-row SELECT ... FOR UPDATE SKIP LOCKED with
# the DELETE of those rows (on a table filled first), each reported in
# rows per second. Two more run on tidemq's own messages table (its
# indexes and depth triggers), to show what the schema leaves of the
# ceiling without a node: messages-10, the 10-row insert, and
# messages-take-10, a receive's write of 10 rows then their delete.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
COUNT=${2:-10000}
BASE=${3:-}
NODES=${NODES:-1 2 3}
LIMIT_BYTES=${LIMIT_BYTES:-}
read -r -a BENCH_FLAGS <<<"${BENCH_FLAGS:-}"
CLIENTS=16
SCENARIOS=(send send-batch receive receive-batch fifo)

TMP=$(mktemp -d /tmp/tidemq-pgcompare.XXXXXX)
chmod 711 "$TMP" # the postgres user reaches its directory inside
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  stop_pg
  rm -rf "$TMP"
}
trap cleanup EXIT
. bench/lib.sh

go build -o "$TMP/tidemq" ./cmd/tidemq
TIDEMQ="$TMP/tidemq"
BASEBIN=""
if [ -n "$BASE" ]; then
  mkdir -p "$TMP/base"
  git archive "$BASE" | tar -x -C "$TMP/base"
  (cd "$TMP/base" && go build -o "$TMP/tidemq-base" ./cmd/tidemq)
  BASEBIN="$TMP/tidemq-base"
fi

# PG_CONF: more settings for the server, one per line (e.g.
# "autovacuum_naptime = 5s"); printed with the results.
start_pg "${PG_CONF:-}"
PGDSN="postgres://postgres@127.0.0.1:$PGPORT"
psql() { "$PSQL" -q -X -h 127.0.0.1 -p "$PGPORT" -U postgres "$@"; }

# serve NAME ARGS... starts a node and sets URL to its URL.
serve() {
  local name=$1; shift
  : >"$TMP/$name.log"
  "${SERVE_BIN:-$TIDEMQ}" serve --listen 127.0.0.1:0 --no-alarms --log-format json "$@" >/dev/null 2>"$TMP/$name.log" &
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

# cpu_ticks prints the CPU time (user + system, in clock ticks) the
# running nodes have used so far, all of them together.
cpu_ticks() {
  local t=0 p
  for p in "${PIDS[@]}"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done
  echo "$t"
}

# run CONFIG URL... runs every scenario over the nodes and appends JSON
# lines (one per bench process and scenario) to $TMP/results, and one
# line with the CPU time the nodes used for all of them.
run() {
  local config=$1; shift
  local n=$#
  local t0
  t0=$(cpu_ticks)
  for sc in "${SCENARIOS[@]}"; do
    local i=0 bp=()
    for url in "$@"; do
      local c=$(( (CLIENTS + n - 1 - i) / n ))
      "$TIDEMQ" bench "$sc" "${BENCH_FLAGS[@]}" --unsigned --endpoint "$url" --clients "$c" --count $((COUNT / n)) \
        --queue "cmp-$i" --json 2>>"$TMP/bench.err" | sed "s/^{/{\"config\":\"$config\",\"round\":$ROUND,/" >>"$TMP/results" &
      bp+=($!); i=$((i + 1))
    done
    for p in "${bp[@]}"; do wait "$p" || echo "bench failed ($config $sc), see below" >&2; done
  done
  python3 -c "import json; print(json.dumps({'config':'$config','round':$ROUND,'scenario':'node cpu','cpu_s':($(cpu_ticks) - $t0) / $(getconf CLK_TCK)}))" >>"$TMP/results"
}

# pgbench_rate NAME ROWS_PER_TX SCRIPT runs SCRIPT with 16 clients for
# COUNT rows in all and appends its rate in rows per second.
pgbench_rate() {
  local name=$1 rows=$2 script=$3 db=$4
  local tx=$(( (COUNT / rows + CLIENTS - 1) / CLIENTS ))
  printf '%s\n' "$script" >"$TMP/$name.sql"
  local tps
  tps=$("$PGBENCH" -n -h 127.0.0.1 -p "$PGPORT" -U postgres -c "$CLIENTS" -j 2 -t "$tx" -f "$TMP/$name.sql" "$db" 2>>"$TMP/bench.err" |
    sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p') || true
  [ -n "$tps" ] || { echo "pgbench $name failed:" >&2; tail -n 5 "$TMP/bench.err" >&2; return; }
  python3 -c "import json,sys; print(json.dumps({'config':'pgbench','round':$ROUND,'scenario':'$name','messages':float('$tps')*$rows,'elapsed_ns':1e9}))" >>"$TMP/results"
}
ceiling() {
  local db="pgb_$ROUND"
  psql -c "CREATE DATABASE $db"
  psql -d "$db" -c "CREATE TABLE pgb (id bigserial PRIMARY KEY, body text NOT NULL)"
  pgbench_rate insert-1 1 "INSERT INTO pgb (body) VALUES (repeat('x', 256));" "$db"
  pgbench_rate insert-10 10 "INSERT INTO pgb (body) SELECT repeat('x', 256) FROM generate_series(1, 10);" "$db"
  psql -d "$db" -c "TRUNCATE pgb; INSERT INTO pgb (body) SELECT repeat('x', 256) FROM generate_series(1, $((COUNT * 2)))"
  psql -d "$db" -c "VACUUM ANALYZE pgb"
  pgbench_rate take-10 10 "WITH c AS (SELECT id FROM pgb ORDER BY id LIMIT 10 FOR UPDATE SKIP LOCKED) DELETE FROM pgb USING c WHERE pgb.id = c.id;" "$db"
  psql -c "DROP DATABASE $db"
  # The same 10-row insert into tidemq's own messages table (the head's
  # schema, made by a node that then stops; one queue, made through the
  # API): what PostgreSQL does with the rows and indexes a send writes,
  # without a node. The message ids are the node's work, so a constant.
  db="pgs_$ROUND"
  psql -c "CREATE DATABASE $db"
  serve schema --store "$PGDSN/$db?sslmode=disable" --data-dir "$TMP/schema-$ROUND"
  curl -fsS -o /dev/null -X POST -H 'Content-Type: application/x-amz-json-1.0' -H 'X-Amz-Target: AmazonSQS.CreateQueue' \
    -d '{"QueueName":"pgbench"}' "$URL/" || { echo "CreateQueue on the schema's node failed:" >&2; cat "$TMP/schema.log" >&2; exit 1; }
  stop_all
  pgbench_rate messages-10 10 "INSERT INTO messages (queue_id, seq, message_id, body, sender, sent_at, enqueued_at, visible_at)
    SELECT q.id, nextval('message_seq'), repeat('m', 36), repeat('x', 256), '000000000000', 0, 0, 0
    FROM queues q, generate_series(1, 10) WHERE q.name = 'pgbench';" "$db"
  # And take-10 on it: a receive's write of 10 rows (what changes, with
  # the bodies returned), then the delete of those rows, each its own
  # transaction, as receive + DeleteMessageBatch does (without the
  # receive's history event). The delete finds its rows by the deadline the
  # client wrote (unique to it, through the index of received messages)
  # where a node's delete names them by key: 10 index probes either way.
  local qid
  qid=$(psql -At -d "$db" -c "SELECT id FROM queues WHERE name = 'pgbench'")
  psql -d "$db" -c "DELETE FROM messages; INSERT INTO messages (queue_id, seq, message_id, body, sender, sent_at, enqueued_at, visible_at)
    SELECT $qid, nextval('message_seq'), repeat('m', 36), repeat('x', 256), '000000000000', 0, 0, 0 FROM generate_series(1, $((COUNT * 2)))"
  psql -d "$db" -c "VACUUM ANALYZE messages"
  pgbench_rate messages-take-10 10 "WITH c AS (SELECT seq FROM messages WHERE queue_id = $qid AND receive_count = 0 AND visible_at <= 0
      ORDER BY visible_at, seq LIMIT 10 FOR UPDATE SKIP LOCKED)
    UPDATE messages m SET receive_count = m.receive_count + 1, first_receive = 1, received_at = 1, visible_at = 1000000000 + :client_id, held = true
    FROM c WHERE m.queue_id = $qid AND m.seq = c.seq RETURNING m.body;
  DELETE FROM messages WHERE queue_id = $qid AND receive_count > 0 AND visible_at = 1000000000 + :client_id;" "$db"
  psql -c "DROP DATABASE $db"
}

# pgnodes CONFIG N BIN runs every scenario on N nodes of BIN.
pgnodes() {
  local config=$1 n=$2
  echo "round $ROUND: $config" >&2
  local db="cmp_${config//-/_}_$ROUND"
  psql -c "CREATE DATABASE $db"
  local urls=()
  for i in $(seq "$n"); do
    SERVE_BIN=$3 serve "$config-$i" --store "$PGDSN/$db?sslmode=disable" --data-dir "$TMP/pgnode-$config-$i-$ROUND" "${@:4}"
    urls+=("$URL")
  done
  run "$config" "${urls[@]}"; stop_all
  psql -c "DROP DATABASE $db"
}

# The base runs before the head in odd rounds and after it in even ones,
# so that a drift of the shared machine's load over a round does not
# favour one side. The load average at each round's start is printed at
# the end.
for ROUND in $(seq "$ROUNDS"); do
  echo "round $ROUND: load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$TMP/load" >&2
  echo "round $ROUND: pgbench" >&2
  ceiling
  echo "round $ROUND: pebble" >&2
  serve pebble --data-dir "$TMP/pebble-$ROUND"
  run pebble "$URL"; stop_all
  if [ -n "$BASEBIN" ] && [ $((ROUND % 2)) -eq 1 ]; then pgnodes base-1 1 "$BASEBIN"; fi
  for n in $NODES; do pgnodes "postgres-$n" "$n" "$TIDEMQ"; done
  [ -n "$LIMIT_BYTES" ] && pgnodes limited-1 1 "$TIDEMQ" --max-queue-bytes "$LIMIT_BYTES"
  if [ -n "$BASEBIN" ] && [ $((ROUND % 2)) -eq 0 ]; then pgnodes base-1 1 "$BASEBIN"; fi
done
echo "round end: load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$TMP/load"
grep -v -e '^$' -e '^note: no AWS credentials' "$TMP/bench.err" | tail -n 20 >&2 || true
cat "$TMP/load"
if [ -n "${PG_CONF:-}" ]; then
  names=$(printf '%s\n' "$PG_CONF" | sed -n 's/^[[:space:]]*\([A-Za-z_.]*\)[[:space:]]*=.*/\1/p' | paste -sd, -)
  echo "PostgreSQL settings from PG_CONF, as the server ran them: $(psql -At -c "SELECT string_agg(name || ' = ' || setting || coalesce(unit, ''), ', ')
    FROM pg_settings WHERE name = ANY(string_to_array('$names', ','))")"
fi

python3 - "$TMP/results" "$COUNT" "${#SCENARIOS[@]}" <<'PY'
import json, sys, statistics, collections
runs = collections.defaultdict(lambda: collections.defaultdict(list))  # (config, scenario) -> round -> results
cpu = collections.defaultdict(list)  # config -> the nodes' CPU seconds of each round
bad = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["scenario"] == "node cpu":
        cpu[r["config"]].append(r["cpu_s"])
        continue
    runs[(r["config"], r["scenario"])][r["round"]].append(r)
    if r.get("send_messages_per_second"):
        # the send phase before a measured receive phase: all processes
        # sent at once, so their rates add up
        s = dict(r, scenario=r["scenario"] + " (send phase)", messages=r["send_messages_per_second"], elapsed_ns=1e9)
        runs[(r["config"], s["scenario"])][r["round"]].append(s)
    bad += r.get("errors", 0) + r.get("lost", 0) + r.get("duplicates", 0)
configs = [c for c in ["pebble", "base-1", "postgres-1", "limited-1", "postgres-2", "postgres-3"] if any(k[0] == c for k in runs)]
scenarios = []
for (c, s) in runs:
    if s not in scenarios and c != "pgbench":
        scenarios.append(s)
def rate(rs):
    return sum(r["messages"] for r in rs) / max(r["elapsed_ns"] for r in rs) * 1e9
def median(c, s):
    rates = [rate(rs) for rs in runs[(c, s)].values()]
    return statistics.median(rates) if rates else float("nan")
# The 3-node column only when three nodes ran (NODES may leave them out).
three = "postgres-3" in configs
print("| scenario | " + " | ".join(configs) + " | PG 1 node / Pebble |" + (" PG 3 / PG 1 |" if three else ""))
print("|---|" + "---|" * (len(configs) + 1 + three))
for s in scenarios:
    med = {c: median(c, s) for c in configs}
    cells = [f"{med[c]:,.0f}" for c in configs]
    nan = float("nan")
    print(f"| {s} | " + " | ".join(cells) + f" | {med.get('postgres-1', nan)/med['pebble']:.2f}× |" +
          (f" {med['postgres-3']/med.get('postgres-1', nan):.2f}× |" if three else ""))
print(f"\nmessages per second, median of {len(next(iter(runs.values())))} rounds; errors + lost + duplicated over every run: {bad}")
# Against the ceiling: each scenario and the pgbench script that does the
# same writes; the nodes' total for 2 and 3 nodes.
ceil = {k: median("pgbench", k) for k in ["insert-1", "insert-10", "take-10", "messages-10", "messages-take-10"]}
print("\npgbench ceiling (rows/s, median): " + ", ".join(f"{k} {v:,.0f}" for k, v in ceil.items()) +
      f"\n(on tidemq's messages table: messages-10, insert-10's rows, {ceil['messages-10']/ceil['insert-10']:.2f}× insert-10;" +
      f" messages-take-10, a receive's write then the delete, {ceil['messages-take-10']/ceil['take-10']:.2f}× take-10)")
pairs = [("send", "insert-1"), ("send-batch", "insert-10"), ("send-batch", "messages-10"), ("receive-batch", "take-10"),
         ("receive-batch", "messages-take-10"), ("receive", "take-10")]
pg = [c for c in configs if c != "pebble"]
print("\n| scenario | ceiling | " + " | ".join(f"{c} / ceiling" for c in pg) + " |")
print("|---|---|" + "---|" * len(pg))
for s, k in pairs:
    if (pg[0], s) in runs:
        print(f"| {s} | {k} {ceil[k]:,.0f} | " + " | ".join(f"{median(c, s)/ceil[k]:.2f}×" for c in pg) + " |")
fifo = [s for s in scenarios if s.startswith("fifo/") and "send phase" not in s]
for s in fifo:
    print(f"| {s} / receive-batch | | " + " | ".join(f"{median(c, s)/median(c, 'receive-batch'):.2f}×" for c in pg) + " |")
# The nodes' CPU: every scenario sends, receives and deletes COUNT
# messages (the send scenarios drain their queue afterwards), so the same
# work in every configuration.
per = int(sys.argv[2]) * int(sys.argv[3])
med_cpu = {c: statistics.median(cpu[c]) for c in configs if cpu[c]}
if med_cpu:
    print("\n| the nodes' CPU, all scenarios | " + " | ".join(configs) + " |\n|---|" + "---|" * len(configs))
    print("| seconds (median) | " + " | ".join(f"{med_cpu.get(c, float('nan')):.2f}" for c in configs) + " |")
    print("| ms a message (sent, received, deleted) | " + " | ".join(f"{med_cpu.get(c, float('nan')) * 1000 / per:.3f}" for c in configs) + " |")
    if "pebble" in med_cpu:
        print("| / Pebble | " + " | ".join(f"{med_cpu.get(c, float('nan')) / med_cpu['pebble']:.2f}×" for c in configs) + " |")
if "base-1" in configs:
    after = [c for c in ["postgres-1", "limited-1"] if c in configs]
    print("\n| scenario | before (base-1) | " + " | ".join(f"after ({c})" for c in after) + " | " +
          " | ".join(f"{c} / before" for c in after) + " |\n|---|---|" + "---|---|" * len(after))
    for s in scenarios:
        b = median("base-1", s)
        print(f"| {s} | {b:,.0f} | " + " | ".join(f"{median(c, s):,.0f}" for c in after) + " | " +
              " | ".join(f"{median(c, s)/b:.2f}×" for c in after) + " |")
    if med_cpu.get("base-1"):
        print("| node CPU a message | " + f"{med_cpu['base-1'] * 1000 / per:.3f} ms | " +
              " | ".join(f"{med_cpu.get(c, float('nan')) * 1000 / per:.3f} ms" for c in after) + " | " +
              " | ".join(f"{med_cpu.get(c, float('nan')) / med_cpu['base-1']:.2f}×" for c in after) + " |")
PY
