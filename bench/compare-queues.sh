#!/usr/bin/env bash
# A server holding many empty queues, measured side by side with a base
# commit (issue 25: at 100,000 queues, RSS under 200 MiB idle; a default
# /metrics scrape under 1 MB and 100 ms; 20 concurrent scrapes add under
# 50 MiB). Prints the medians of every figure of `tidemq bench queues`.
#
# Usage: bench/compare-queues.sh [ROUNDS] [QUEUES] [BASE] [IDLE]
#   ROUNDS  rounds of each binary, alternating which goes first (default 3)
#   QUEUES  queues each server is given (default 100000)
#   BASE    a commit to measure too (built from `git archive`, so the
#           worktree is left alone); default: none
#   IDLE    how long each server idles once its queues exist (default 40s:
#           longer than the alarms' 30 s interval, so that they have
#           evaluated every queue before the RSS is read)
#
# Each run starts `tidemq serve` on a fresh --data-dir (the embedded
# store, durable, alarms on: the defaults), creates the queues through
# the SQS API (32 clients), waits IDLE, then reads the server's RSS
# (/proc/PID/status), scrapes /metrics three times, sends 20 scrapes at
# once while sampling the RSS every 5 ms, fetches /tidemq/queues and the
# console's overview three times each, reads the RSS again, and reads
# every page of /tidemq/queues as tidemq queues does; the server is then
# stopped and its directory removed. The load generator is always this worktree's binary.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
ROUNDS=${1:-3}
QUEUES=${2:-100000}
BASE=${3:-}
IDLE=${4:-40s}

use_tmp tidemq-queues

go build -o "$TMP/tidemq" ./cmd/tidemq
CONFIGS=(new)
declare -A BIN=([new]="$TMP/tidemq")
if [ -n "$BASE" ]; then
  build_at "$BASE" "$TMP/base" "$TMP/tidemq-base"
  BIN[base]="$TMP/tidemq-base"
  CONFIGS=(base new)
fi

run() { # config round
  local port dir
  port=$(free_port)
  dir="$TMP/data-$1-$2"
  start_embedded "${BIN[$1]}" "$dir" "$port" "$TMP/server-$1-$2.log"
  "$TMP/tidemq" bench queues --endpoint "http://127.0.0.1:$port" --unsigned --json --progress=false \
    --queues "$QUEUES" --clients 32 --idle "$IDLE" --server-pid "$SERVER" 2>/dev/null |
    python3 -c "import json,sys; r=json.loads(sys.stdin.read()); r['config']='$1'; r['round']=$2; print(json.dumps(r))" >>"$TMP/results"
  stop_server
  rm -rf "$dir"
}

for round in $(seq "$ROUNDS"); do
  order=("${CONFIGS[@]}")
  if [ $((round % 2)) = 0 ]; then order=($(printf '%s\n' "${CONFIGS[@]}" | tac)); fi
  for c in "${order[@]}"; do
    echo "round $round: $c" >&2
    run "$c" "$round"
  done
done

python3 - "$TMP/results" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
configs = sorted({r["config"] for r in runs}, key=lambda c: c != "base")
MiB = 1 << 20
rows = [
    ("idle RSS (MiB)", lambda r: r["idle_rss_bytes"] / MiB, "{:.1f}"),
    ("/metrics bytes", lambda r: r["metrics_bytes"], "{:,.0f}"),
    ("/metrics time, median of 3 (ms)", lambda r: r["metrics_ns"] / 1e6, "{:.1f}"),
    ("20 concurrent scrapes: time (ms)", lambda r: r["concurrent_ns"] / 1e6, "{:.0f}"),
    ("20 concurrent scrapes: RSS added (MiB)", lambda r: r["concurrent_rss_growth_bytes"] / MiB, "{:.1f}"),
    ("RSS after the scrapes (MiB)", lambda r: r["rss_after_bytes"] / MiB, "{:.1f}"),
    ("/tidemq/queues bytes", lambda r: r["queues_page_bytes"], "{:,.0f}"),
    ("/tidemq/queues time (ms)", lambda r: r["queues_page_ns"] / 1e6, "{:.0f}"),
    ("console overview bytes", lambda r: r["overview_bytes"], "{:,.0f}"),
    ("console overview time (ms)", lambda r: r["overview_ns"] / 1e6, "{:.0f}"),
    ("RSS after the pages and overviews (MiB)", lambda r: r["rss_after_pages_bytes"] / MiB, "{:.1f}"),
    ("every page of /tidemq/queues, 10,000 a page (ms)", lambda r: r["queues_walk_ns"] / 1e6, "{:.0f}"),
    ("creating the queues (s)", lambda r: r["create_ns"] / 1e9, "{:.1f}"),
]
n = len([r for r in runs if r["config"] == configs[-1]])
print(f"{runs[0]['queues']:,} queues, median of {n} runs each (every run's values in brackets)")
print("| | " + " | ".join(configs) + " |")
print("|---" * (len(configs) + 1) + "|")
for name, f, fmt in rows:
    cells = []
    for c in configs:
        vals = [f(r) for r in runs if r["config"] == c]
        cells.append(fmt.format(statistics.median(vals)) + " (" + ", ".join(fmt.format(v) for v in vals) + ")")
    print(f"| {name} | " + " | ".join(cells) + " |")
PY
