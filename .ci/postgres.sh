#!/usr/bin/env bash
# Installs PostgreSQL from Debian's packages (when missing), starts a throw-away cluster on loopback and prints its
# URL (for ANYTOOL_TEST_POSTGRES). Prints nothing and exits 1 when that is not possible; the tests then skip.
set -euo pipefail
PORT="${ANYTOOL_PG_PORT:-55432}"
DIR="${ANYTOOL_PG_DIR:-/tmp/anytool-pg-$PORT}"
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    (apt-get install -y -q postgresql || (apt-get update -q && apt-get install -y -q postgresql)) >&2
  else
    echo "postgres.sh: PostgreSQL is not installed and cannot be installed here" >&2; exit 1
  fi
fi
BIN="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
run() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
if ! run "$BIN/pg_ctl" -D "$DIR" status >/dev/null 2>&1; then
  rm -rf "$DIR"; mkdir -p "$DIR"
  [ "$(id -u)" = 0 ] && chown postgres "$DIR"
  run "$BIN/initdb" -D "$DIR" -A trust -U postgres >&2
  run "$BIN/pg_ctl" -D "$DIR" -w -l "$DIR/server.log" \
    -o "-c listen_addresses=127.0.0.1 -p $PORT -k $DIR -c max_connections=50" start >&2
  run "$BIN/createdb" -h 127.0.0.1 -p "$PORT" -U postgres anytool_test >&2
fi
echo "postgresql://postgres@127.0.0.1:$PORT/anytool_test"
