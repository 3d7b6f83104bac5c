#!/usr/bin/env bash
# with-postgres.sh CMD... — run CMD with CAIRN_TEST_POSTGRES_URL pointing at a
# PostgreSQL server.
#
# If CAIRN_TEST_POSTGRES_URL is already set, CMD runs against that server.
# Otherwise a throwaway server is started from the installed binaries (initdb,
# pg_ctl; as the unprivileged `postgres` user when run as root) in a temporary
# directory, listening only on a Unix socket there, and removed afterwards.
# When no PostgreSQL binaries exist: with CI=true this fails, saying what is
# missing; otherwise CMD runs without PostgreSQL and the suites that need it
# report loudly that they did not run.
set -euo pipefail

if [[ -n "${CAIRN_TEST_POSTGRES_URL:-}" ]]; then
  echo "with-postgres: using CAIRN_TEST_POSTGRES_URL from the environment" >&2
  exec "$@"
fi

find_bin() {
  local name=$1
  if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return; fi
  local d
  for d in /usr/lib/postgresql/*/bin /usr/local/pgsql/bin; do
    if [[ -x "$d/$name" ]]; then echo "$d/$name"; return; fi
  done
}

INITDB=$(find_bin initdb || true)
PG_CTL=$(find_bin pg_ctl || true)
if [[ -z "$INITDB" || -z "$PG_CTL" ]]; then
  msg="PostgreSQL server binaries (initdb, pg_ctl) not found on PATH or in /usr/lib/postgresql/*/bin; install the Debian package postgresql (e.g. apt-get install -y postgresql-15) or set CAIRN_TEST_POSTGRES_URL=postgres://..."
  if [[ "${CI:-}" == "true" ]]; then
    echo "with-postgres: FATAL: $msg" >&2
    exit 1
  fi
  echo "################################################################" >&2
  echo "with-postgres: WARNING: $msg" >&2
  echo "with-postgres: the PostgreSQL suites will NOT run" >&2
  echo "################################################################" >&2
  exec "$@"
fi

RUN_AS=()
if [[ $(id -u) -eq 0 ]]; then
  if ! id postgres >/dev/null 2>&1; then
    useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres
  fi
  RUN_AS=(runuser -u postgres --)
fi

DIR=$(mktemp -d /tmp/cairn-pg.XXXXXX)
chmod 0755 "$DIR"
[[ ${#RUN_AS[@]} -gt 0 ]] && chown postgres: "$DIR"
PORT=5432
cleanup() {
  "${RUN_AS[@]}" "$PG_CTL" -D "$DIR/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$DIR"
}
trap cleanup EXIT INT TERM

"${RUN_AS[@]}" "$INITDB" -D "$DIR/data" -A trust -U postgres --no-sync >"$DIR/initdb.log" 2>&1 \
  || { cat "$DIR/initdb.log" >&2; exit 1; }
# Tuned for a test server: fast, but fsync stays on so benchmarks are honest.
"${RUN_AS[@]}" "$PG_CTL" -D "$DIR/data" -w -l "$DIR/server.log" \
  -o "-k $DIR -p $PORT -c listen_addresses='' -c max_connections=200 -c shared_buffers=256MB" start >/dev/null \
  || { cat "$DIR/server.log" >&2; exit 1; }

export CAIRN_TEST_POSTGRES_URL="postgres://postgres@/postgres?host=$DIR&port=$PORT&sslmode=disable"
echo "with-postgres: throwaway PostgreSQL at $DIR (removed on exit)" >&2
set +e
"$@"
rc=$?
set -e
exit $rc
