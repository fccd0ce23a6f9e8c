# Helpers of the bench/*.sh scripts (sourced, not run).

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

# start_pg [CONF] starts a throwaway PostgreSQL in $TMP/pg (initdb and
# pg_ctl, as the postgres user when run as root; $TMP must be reachable by
# it, chmod 711) on a free port of 127.0.0.1, durable (fsync and
# synchronous_commit on), with the lines CONF added to its
# postgresql.conf. It sets PGBIN, as_pg, PGPORT, PSQL and PGBENCH; stop_pg
# stops it, and does nothing when it was not started.
start_pg() {
  PGBIN=$(dirname "$(command -v initdb 2>/dev/null || ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -n 1)")
  as_pg=()
  mkdir -p "$TMP/pg"
  if [ "$(id -u)" = 0 ]; then chown postgres: "$TMP/pg"; as_pg=(runuser -u postgres --); fi
  "${as_pg[@]}" "$PGBIN/initdb" -D "$TMP/pg/data" -U postgres -A trust -E UTF8 --no-locale >/dev/null
  PGPORT=$(free_port)
  cat >>"$TMP/pg/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $PGPORT
unix_socket_directories = '$TMP/pg'
max_connections = 300
shared_buffers = 256MB
max_wal_size = 1GB
CONF
  if [ -n "${1:-}" ]; then printf '%s\n' "$1" >>"$TMP/pg/data/postgresql.conf"; fi
  "${as_pg[@]}" "$PGBIN/pg_ctl" -D "$TMP/pg/data" -l "$TMP/pg/log" -w -t 60 start >/dev/null
  PSQL=$(command -v psql || echo "$PGBIN/psql")
  PGBENCH=$(command -v pgbench || echo "$PGBIN/pgbench")
}

# stop_pg stops start_pg's server at once.
stop_pg() {
  if [ -n "${PGBIN:-}" ]; then
    "${as_pg[@]}" "$PGBIN/pg_ctl" -D "$TMP/pg/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
}
