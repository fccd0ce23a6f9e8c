#!/usr/bin/env bash
# What each part of tidemq's messages table costs PostgreSQL, measured with
# pgbench alone (no tidemq node in the way): the rows and indexes a send's
# insert and a receive's write and delete meet, with one part taken away
# at a time.
#
# Usage: bench/pgbench-table.sh [ROUNDS] [ROWS]
#   ROUNDS  rounds, each measuring every table in turn, in alternating
#           order (default 3)
#   ROWS    rows per table and script in a round (default 20000)
#
# It starts a throwaway PostgreSQL with the settings of
# bench/compare-postgres.sh (durable: fsync and synchronous_commit on),
# lets a tidemq node create its schema, adds one queue, and measures:
#   messages  the head's table itself, with its depth triggers
#   gen       a copy with the depth triggers whose size column is generated
#             by PostgreSQL, as before migration 0018 (the node writes it
#             since; the other tables' inserts write it too)
#   notrig    a copy without the depth triggers (LIKE messages INCLUDING ALL)
#   noage     notrig without messages_age (retention, peek, the oldest age)
#   nofifo    notrig without the FIFO indexes (messages_group,
#             messages_group_visible)
#   plain     pgbench's one-index table (id bigserial, body), as the
#             ceiling of bench/compare-postgres.sh (inserts only)
# 16 clients, 256-byte bodies: insert-10 inserts 10 rows per transaction as
# a send's group commit does; take-10 is bench/compare-postgres.sh's
# messages-take-10 (a receive's write of 10 rows with SKIP LOCKED, then
# their delete, two transactions) on a table filled first. It prints rows
# per second, the median of the rounds (their range beside it), and each
# against messages.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
ROWS=${2:-20000}
CLIENTS=16

TMP=$(mktemp -d /tmp/tidemq-pgtable.XXXXXX)
chmod 711 "$TMP"
NODE=""
cleanup() {
  [ -n "$NODE" ] && kill "$NODE" 2>/dev/null || true
  stop_pg
  rm -rf "$TMP"
}
trap cleanup EXIT
. bench/lib.sh
go build -o "$TMP/tidemq" ./cmd/tidemq

start_pg
psql() { "$PSQL" -q -X -h 127.0.0.1 -p "$PGPORT" -U postgres -d size "$@"; }
"$PSQL" -q -X -h 127.0.0.1 -p "$PGPORT" -U postgres -c "CREATE DATABASE size"

# The node migrates the database, then goes.
"$TMP/tidemq" serve --listen 127.0.0.1:0 --no-alarms --log-format json --data-dir "$TMP/node" \
  --store "postgres://postgres@127.0.0.1:$PGPORT/size?sslmode=disable" >/dev/null 2>"$TMP/node.log" &
NODE=$!
for _ in $(seq 100); do grep -q '"tidemq listening"' "$TMP/node.log" && break; sleep 0.1; done
grep -q '"tidemq listening"' "$TMP/node.log" || { echo "the node did not start:" >&2; cat "$TMP/node.log" >&2; exit 1; }
kill "$NODE"; wait "$NODE" 2>/dev/null || true; NODE=""

QID=$(psql -At -c "INSERT INTO queues (name, fifo, attrs, created, modified) VALUES ('pgbench', false, '{}', 0, 0) RETURNING id")
psql <<'SQL'
CREATE TABLE gen (LIKE messages INCLUDING DEFAULTS INCLUDING INDEXES);
ALTER TABLE gen DROP COLUMN size;
ALTER TABLE gen ADD COLUMN size integer NOT NULL GENERATED ALWAYS AS (tidemq_message_size(body, attrs)) STORED;
CREATE TRIGGER gen_ins AFTER INSERT ON gen REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION tidemq_count_inserted();
CREATE TRIGGER gen_del AFTER DELETE ON gen REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION tidemq_count_deleted();
CREATE TABLE notrig (LIKE messages INCLUDING ALL);
CREATE TABLE noage (LIKE messages INCLUDING ALL);
CREATE TABLE nofifo (LIKE messages INCLUDING ALL);
CREATE TABLE plain (id bigserial PRIMARY KEY, body text NOT NULL);
SQL
drop_index() { # TABLE COLUMNS: the copy's index on COLUMNS
  psql -c "DROP INDEX $(psql -At -c "SELECT indexrelid::regclass FROM pg_index WHERE indrelid = '$1'::regclass
    AND pg_get_indexdef(indexrelid) LIKE '%($2)%'" | paste -sd,)"
}
drop_index noage "queue_id, enqueued_at, seq"
drop_index nofifo "queue_id, group_id, seq"
drop_index nofifo "queue_id, group_id, visible_at"
TABLES="messages gen notrig noage nofifo"
# The copies vacuum as messages does (migrations/0003: LIKE does not copy
# storage parameters), so that only the part taken away differs.
OPTS=$(psql -At -c "SELECT array_to_string(reloptions, ', ') FROM pg_class WHERE oid = 'messages'::regclass")
for t in gen notrig noage nofifo; do psql -c "ALTER TABLE $t SET ($OPTS)"; done

# insert TABLE N: an insert of N rows as commitSQL writes them.
insert() {
  if [ "$1" = plain ]; then echo "INSERT INTO plain (body) SELECT repeat('x', 256) FROM generate_series(1, $2);"; return; fi
  local size=", size" sval=", 256"
  [ "$1" = gen ] && size="" sval=""
  echo "INSERT INTO $1 (queue_id, seq, message_id, body, sender, sent_at, enqueued_at, visible_at$size)
SELECT $QID, nextval('message_seq'), repeat('m', 36), repeat('x', 256), 'bench', 0, 0, 0$sval FROM generate_series(1, $2);"
}
# take TABLE: messages-take-10 of bench/compare-postgres.sh on TABLE.
take() {
  echo "WITH c AS (SELECT seq FROM $1 WHERE queue_id = $QID AND receive_count = 0 AND visible_at <= 0
    ORDER BY visible_at, seq LIMIT 10 FOR UPDATE SKIP LOCKED)
  UPDATE $1 m SET receive_count = m.receive_count + 1, first_receive = 1, received_at = 1, visible_at = 1000000000 + :client_id, held = true
  FROM c WHERE m.queue_id = $QID AND m.seq = c.seq RETURNING m.body;
DELETE FROM $1 WHERE queue_id = $QID AND receive_count > 0 AND visible_at = 1000000000 + :client_id;"
}
rate() { # NAME SQL
  local f="$TMP/${1//\//_}.sql"
  printf '%s\n' "$2" >"$f"
  local tx=$(( (ROWS / 10 + CLIENTS - 1) / CLIENTS ))
  local tps=""
  tps=$("$PGBENCH" -n -h 127.0.0.1 -p "$PGPORT" -U postgres -c "$CLIENTS" -j 2 -t "$tx" -f "$f" size 2>>"$TMP/err" |
    sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p') || true
  [ -n "$tps" ] || { echo "pgbench $1 failed:" >&2; tail -n 5 "$TMP/err" >&2; exit 1; }
  echo "$1 $(python3 -c "print(float('$tps') * 10)")" >>"$TMP/results"
}
for r in $(seq "$ROUNDS"); do
  order=$TABLES; [ $((r % 2)) -eq 0 ] && order=$(echo "$TABLES" | tr ' ' '\n' | tac | paste -sd' ')
  echo "round $r ($order): load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  psql -c "TRUNCATE plain" -c CHECKPOINT
  rate "insert-10/plain" "$(insert plain 10)"
  for t in $order; do
    psql -c "DELETE FROM $t" -c "VACUUM $t" -c CHECKPOINT
    rate "insert-10/$t" "$(insert "$t" 10)"
  done
  for t in $order; do
    psql -c "DELETE FROM $t" -c "$(insert "$t" $((ROWS * 2)))" -c "VACUUM ANALYZE $t" -c CHECKPOINT
    rate "take-10/$t" "$(take "$t")"
  done
done
echo "end: load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
python3 - "$TMP/results" <<'PY'
import sys, statistics, collections
r = collections.defaultdict(list)
for line in open(sys.argv[1]):
    k, v = line.split()
    r[k].append(float(v))
print("| table | insert-10 (rows/s) | / messages | take-10 (rows/s) | / messages |\n|---|---|---|---|---|")
med = {k: statistics.median(v) for k, v in r.items()}
def cell(key, base):
    if key not in r:
        return ("", "")
    v = r[key]
    return (f"{med[key]:,.0f} ({min(v):,.0f}-{max(v):,.0f})", f"{med[key] / med[base]:.2f}x")
for t in ("plain", "messages", "gen", "notrig", "noage", "nofifo"):
    print("| %s | %s | %s | %s | %s |" % ((t,) + cell("insert-10/" + t, "insert-10/messages") + cell("take-10/" + t, "take-10/messages")))
print(f"\nmedians of {len(r['insert-10/messages'])} rounds")
PY
