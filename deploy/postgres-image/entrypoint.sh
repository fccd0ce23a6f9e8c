# Starts PostgreSQL on $PGDATA, made at the first start: trust
# authentication from anywhere (a test database on a private network),
# no locale, UTF-8.
set -e
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  initdb -D "$PGDATA" -U postgres -A trust -E UTF8 --no-locale --no-sync >/dev/null
  echo "host all all all trust" >>"$PGDATA/pg_hba.conf"
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/tmp "$@"
