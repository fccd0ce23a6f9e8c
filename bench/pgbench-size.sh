#!/usr/bin/env bash
# What the generated size column of messages (migrations/0013_queue_bytes.sql)
# costs an insert, measured with pgbench alone (no tidemq node in the way).
#
# Usage: bench/pgbench-size.sh [ROUNDS] [ROWS]
#   ROUNDS  rounds, each measuring both tables in turn, in alternating
#           order (default 5)
#   ROWS    rows inserted per table and script in a round (default 20000)
#
# It starts a throwaway PostgreSQL with the settings of
# bench/compare-postgres.sh (durable: fsync and synchronous_commit on),
# lets a tidemq node create its schema, and copies the messages table
# with its indexes and without its triggers: gen keeps the generated
# column (the function of the latest migration), sqlgen computes it with
# the SQL function of 0013_queue_bytes.sql, plain has size as an ordinary
# column that the insert writes (as a node that computes the size itself
# would). The tables are measured in turn, in alternating order. 16 clients insert one row,
# then 10 rows, per transaction: the insert of a send (commitSQL, with a
# 256-byte body and no attributes, and with two message attributes).
# It prints rows per second, the median of the rounds, and the ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
ROWS=${2:-20000}
CLIENTS=16

TMP=$(mktemp -d /tmp/tidemq-pgsize.XXXXXX)
chmod 711 "$TMP"
NODE=""
cleanup() {
  [ -n "$NODE" ] && kill "$NODE" 2>/dev/null || true
  [ -n "${PGBIN:-}" ] && "${as_pg[@]}" "$PGBIN/pg_ctl" -D "$TMP/pg/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap cleanup EXIT
go build -o "$TMP/tidemq" ./cmd/tidemq

PGBIN=$(dirname "$(command -v initdb 2>/dev/null || ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -n 1)")
as_pg=()
mkdir -p "$TMP/pg"
if [ "$(id -u)" = 0 ]; then chown postgres: "$TMP/pg"; as_pg=(runuser -u postgres --); fi
"${as_pg[@]}" "$PGBIN/initdb" -D "$TMP/pg/data" -U postgres -A trust -E UTF8 --no-locale >/dev/null
PGPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >>"$TMP/pg/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $PGPORT
unix_socket_directories = '$TMP/pg'
max_connections = 300
shared_buffers = 256MB
max_wal_size = 1GB
CONF
"${as_pg[@]}" "$PGBIN/pg_ctl" -D "$TMP/pg/data" -l "$TMP/pg/log" -w -t 60 start >/dev/null
PSQL=$(command -v psql || echo "$PGBIN/psql")
PGBENCH=$(command -v pgbench || echo "$PGBIN/pgbench")
psql() { "$PSQL" -q -X -h 127.0.0.1 -p "$PGPORT" -U postgres -d size "$@"; }
"$PSQL" -q -X -h 127.0.0.1 -p "$PGPORT" -U postgres -c "CREATE DATABASE size"

# The node migrates the database, then goes.
"$TMP/tidemq" serve --listen 127.0.0.1:0 --no-alarms --log-format json --data-dir "$TMP/node" \
  --store "postgres://postgres@127.0.0.1:$PGPORT/size?sslmode=disable" >/dev/null 2>"$TMP/node.log" &
NODE=$!
for _ in $(seq 100); do grep -q '"tidemq listening"' "$TMP/node.log" && break; sleep 0.1; done
kill "$NODE"; wait "$NODE" 2>/dev/null || true; NODE=""

psql -c "CREATE TABLE gen (LIKE messages INCLUDING ALL); CREATE TABLE plain (LIKE messages INCLUDING DEFAULTS INCLUDING INDEXES)"
# sqlgen: the generated column with the SQL function of 0013_queue_bytes.sql
# (0014_message_size_plpgsql.sql replaced it with PL/pgSQL).
psql <<'SQL'
CREATE FUNCTION size_sql(body text, attrs bytea) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
	SELECT octet_length(body) + CASE WHEN attrs IS NULL THEN 0 ELSE coalesce((
		SELECT sum(octet_length(a.key) + coalesce(octet_length(a.value->>'DataType'), 0) +
			CASE WHEN a.value->>'DataType' LIKE 'Binary%'
				THEN coalesce(length(decode(a.value->>'BinaryValue', 'base64')), 0)
				ELSE coalesce(octet_length(a.value->>'StringValue'), 0) END)
		FROM jsonb_each(convert_from(attrs, 'UTF8')::jsonb) AS a), 0)::integer END
$$;
CREATE TABLE sqlgen (LIKE plain INCLUDING DEFAULTS INCLUDING INDEXES);
ALTER TABLE sqlgen DROP COLUMN size;
ALTER TABLE sqlgen ADD COLUMN size integer NOT NULL GENERATED ALWAYS AS (size_sql(body, attrs)) STORED;
SQL
ATTRS="convert_to('{\"trace\":{\"DataType\":\"String\",\"StringValue\":\"abc-123\"},\"n\":{\"DataType\":\"Number\",\"StringValue\":\"42\"}}', 'UTF8')"

# script TABLE N ATTRS: an insert of N rows as commitSQL writes them.
script() {
  local size=""; local sval=""
  if [ "$1" = plain ]; then size=", size"; sval=", 256"; [ "$3" != NULL ] && sval=", 280"; fi
  echo "INSERT INTO $1 (queue_id, seq, message_id, body, attrs, sys_attrs, group_id, sender, sent_at, enqueued_at, visible_at$size)
SELECT 1, nextval('message_seq'), md5(random()::text), repeat('x', 256), $3, NULL, '', 'bench', 1, 1, 1$sval FROM generate_series(1, $2);"
}
rate() { # NAME TABLE N ATTRS
  local f="$TMP/${1//\//_}.sql"
  script "$2" "$3" "$4" >"$f"
  local tx=$(( (ROWS / $3 + CLIENTS - 1) / CLIENTS ))
  local tps
  tps=$("$PGBENCH" -n -h 127.0.0.1 -p "$PGPORT" -U postgres -c "$CLIENTS" -j 2 -t "$tx" -f "$f" size 2>>"$TMP/err" |
    sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p')
  echo "$1 $(python3 -c "print(float('$tps') * $3)")" >>"$TMP/results"
}
for r in $(seq "$ROUNDS"); do
  order="sqlgen gen plain"; [ $((r % 2)) -eq 0 ] && order="plain gen sqlgen"
  echo "round $r ($order): load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  for n in 1 10; do
    for a in NULL "$ATTRS"; do
      k=noattrs; [ "$a" != NULL ] && k=attrs
      for t in $order; do rate "insert-$n/$k/$t" "$t" "$n" "$a"; done
      psql -c "TRUNCATE sqlgen, gen, plain"
    done
  done
done
echo "end: load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
python3 - "$TMP/results" <<'PY'
import sys, statistics, collections
r = collections.defaultdict(list)
for line in open(sys.argv[1]):
    k, v = line.split()
    r[k].append(float(v))
print("| insert | sqlgen (rows/s) | gen (rows/s) | plain (rows/s) | gen / sqlgen | plain / sqlgen |\n|---|---|---|---|---|---|")
for k in sorted({k.rsplit("/", 1)[0] for k in r}):
    q, g, p = (statistics.median(r[k + "/" + t]) for t in ("sqlgen", "gen", "plain"))
    print(f"| {k} | {q:,.0f} | {g:,.0f} | {p:,.0f} | {g / q:.2f}x | {p / q:.2f}x |")
print(f"\nmedians of {len(next(iter(r.values())))} rounds")
PY
