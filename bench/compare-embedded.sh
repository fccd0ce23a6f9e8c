#!/usr/bin/env bash
# The embedded store's send and receive rates, side by side with a base
# commit: the check that a change keeps the embedded store's figures
# (issues 21 and 25). Prints, per scenario, the median rate of each binary
# and the median of the per-round ratios (new / base), with every round's
# ratio, and fails when any run reports an error, a loss or a duplicate.
#
# Usage: bench/compare-embedded.sh ROUNDS COUNT BASE [SCENARIO...]
#   ROUNDS    rounds, alternating which binary goes first
#   COUNT     messages per scenario (`tidemq bench --count`)
#   BASE      the commit to compare with (built from `git archive`, so the
#             worktree is left alone)
#   SCENARIO  `tidemq bench` scenarios (default: send send-batch receive
#             receive-batch fifo)
#
# Each run starts `tidemq serve` (durable, defaults) on a fresh --data-dir
# and runs this worktree's `tidemq bench --unsigned` against it.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
if [ $# -lt 3 ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
fi
ROUNDS=$1
COUNT=$2
BASE=$3
shift 3
SCENARIOS=(send send-batch receive receive-batch fifo)
[ $# -gt 0 ] && SCENARIOS=("$@")

use_tmp tidemq-embedded

go build -o "$TMP/tidemq" ./cmd/tidemq
build_at "$BASE" "$TMP/base" "$TMP/tidemq-base"
declare -A BIN=([base]="$TMP/tidemq-base" [new]="$TMP/tidemq")

run() { # config round
  local port dir
  port=$(free_port)
  dir="$TMP/data-$1-$2"
  start_embedded "${BIN[$1]}" "$dir" "$port" "$TMP/server-$1-$2.log"
  "$TMP/tidemq" bench "${SCENARIOS[@]}" --endpoint "http://127.0.0.1:$port" --unsigned --json \
    --count "$COUNT" 2>/dev/null |
    python3 -c "
import json, sys
for l in sys.stdin:
    try:
        r = json.loads(l)
    except ValueError:
        continue
    if 'scenario' in r:
        r['config'], r['round'] = '$1', $2
        print(json.dumps(r))" >>"$TMP/results" || true
  stop_server
  rm -rf "$dir"
}

for round in $(seq "$ROUNDS"); do
  order=(base new)
  [ $((round % 2)) = 0 ] && order=(new base)
  for c in "${order[@]}"; do
    echo "round $round: $c" >&2
    run "$c" "$round"
  done
done

python3 - "$TMP/results" "$BASE" <<'PY'
import collections, json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
rate = collections.defaultdict(dict)  # (scenario, measure) -> {(config, round): msgs/s}
bad = 0
for r in runs:
    bad += r.get("errors", 0) + r.get("lost", 0) + r.get("duplicates", 0)
    rate[(r["scenario"], "")][(r["config"], r["round"])] = r["messages_per_second"]
    if r.get("send_messages_per_second"):
        rate[(r["scenario"], " (send)")][(r["config"], r["round"])] = r["send_messages_per_second"]
print(f"msgs/s, base {sys.argv[2]}; median of the rounds, ratio: median of the per-round ratios")
print("| scenario | base | new | new / base | per round |")
print("|---|---|---|---|---|")
for (sc, m), v in rate.items():
    rounds = sorted({k[1] for k in v if ("base", k[1]) in v and ("new", k[1]) in v})
    ratios = [v[("new", i)] / v[("base", i)] for i in rounds]
    med = lambda c: statistics.median(x for (cc, _), x in v.items() if cc == c)
    print(f"| {sc}{m} | {med('base'):,.0f} | {med('new'):,.0f} | {statistics.median(ratios):.2f}× | "
          + ", ".join(f"{x:.2f}" for x in ratios) + " |")
if bad:
    print(f"{bad} errors, losses or duplicates: see the runs", file=sys.stderr)
    sys.exit(1)
PY
