#!/usr/bin/env bash
# Starts the database servers the idempotency store suites run against, on
# loopback, once for all suites, and stops them afterwards; nothing relies on
# a service that happens to be running.
#
#   scripts/test-servers.sh run -- CMD ...   start all, export their URLs, run CMD, stop all
#   scripts/test-servers.sh start DIR        start all under DIR, write DIR/env (the URLs)
#   scripts/test-servers.sh stop DIR         stop what `start DIR` started
#   scripts/test-servers.sh install          install mariadb-server and redis-server (apt, idempotent)
#
# The URLs exported (and written to DIR/env):
#   RETRYCORE_TEST_POSTGRES  postgresql://postgres@127.0.0.1:PORT/postgres
#   RETRYCORE_TEST_MARIADB   mysql://root@127.0.0.1:PORT/retrycore
#   RETRYCORE_TEST_REDIS     redis://127.0.0.1:PORT/0
#
# PostgreSQL 15 is Debian's postgresql-15 (initdb into DIR, run as the
# unprivileged `postgres` user, which PostgreSQL requires instead of root);
# MariaDB runs from its own data directory and socket; Redis runs without
# persistence and with `maxmemory-policy noeviction`, which the Redis store
# requires (docs/idempotency.md, "Stores").
set -euo pipefail

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PG_USER=${PG_USER:-postgres}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

wait_for() { # wait_for WHAT SECONDS CMD...
  local what=$1 n=$(($2 * 10))
  shift 2
  until "$@" >/dev/null 2>&1; do
    n=$((n - 1))
    if [ "$n" -le 0 ]; then
      echo "test-servers: $what did not start" >&2
      return 1
    fi
    sleep 0.1
  done
}

install() {
  local missing=()
  [ -x /usr/sbin/mariadbd ] || missing+=(mariadb-server)
  command -v redis-server >/dev/null || missing+=(redis-server)
  [ -x "$PG_BIN/initdb" ] || missing+=(postgresql-15)
  if [ ${#missing[@]} -gt 0 ]; then
    # The packages' postinst scripts would start system services: refuse them for this install.
    local policy=/usr/sbin/policy-rc.d created=
    if [ ! -e "$policy" ]; then
      printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && created=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
    [ -z "$created" ] || rm -f "$policy"
  fi
  id "$PG_USER" >/dev/null 2>&1 || useradd --system --no-create-home "$PG_USER"
}

start() {
  local dir=$1
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  chmod 755 "$dir"

  # PostgreSQL: its data directory belongs to the unprivileged user.
  local pg_port
  pg_port=$(free_port)
  mkdir -p "$dir/pg"
  chown "$PG_USER" "$dir/pg"
  runuser -u "$PG_USER" -- "$PG_BIN/initdb" -D "$dir/pg/data" -A trust -U postgres --no-sync >"$dir/pg/initdb.log" 2>&1
  runuser -u "$PG_USER" -- "$PG_BIN/pg_ctl" -D "$dir/pg/data" -l "$dir/pg/server.log" -w -t 30 \
    -o "-c listen_addresses=127.0.0.1 -p $pg_port -k $dir/pg -c fsync=off -c max_connections=100" start >/dev/null

  # MariaDB: its own data directory, socket and port; root over TCP without a password.
  local my_port
  my_port=$(free_port)
  mkdir -p "$dir/mariadb"
  mariadb-install-db --no-defaults --datadir="$dir/mariadb/data" --user=root \
    --auth-root-authentication-method=normal --skip-test-db >"$dir/mariadb/install.log" 2>&1
  /usr/sbin/mariadbd --no-defaults --user=root --datadir="$dir/mariadb/data" --socket="$dir/mariadb/sock" \
    --port="$my_port" --bind-address=127.0.0.1 --pid-file="$dir/mariadb/pid" --skip-name-resolve \
    --innodb-buffer-pool-size=64M --innodb-flush-log-at-trx-commit=0 --skip-log-bin \
    --log-error="$dir/mariadb/server.log" &
  wait_for MariaDB 60 mariadb --no-defaults -S "$dir/mariadb/sock" -u root -e 'SELECT 1'
  mariadb --no-defaults -S "$dir/mariadb/sock" -u root -e \
    "CREATE DATABASE IF NOT EXISTS retrycore; CREATE USER IF NOT EXISTS 'root'@'127.0.0.1'; \
     GRANT ALL ON *.* TO 'root'@'127.0.0.1'; FLUSH PRIVILEGES;"

  # Redis: no persistence, noeviction (an evicted claim would break exactly-once).
  local redis_port
  redis_port=$(free_port)
  mkdir -p "$dir/redis"
  redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --maxmemory-policy noeviction \
    --dir "$dir/redis" --pidfile "$dir/redis/pid" --logfile "$dir/redis/server.log" --daemonize yes
  wait_for Redis 30 redis-cli -p "$redis_port" ping

  cat >"$dir/env" <<EOF
export RETRYCORE_TEST_POSTGRES=postgresql://postgres@127.0.0.1:$pg_port/postgres
export RETRYCORE_TEST_MARIADB=mysql://root@127.0.0.1:$my_port/retrycore
export RETRYCORE_TEST_REDIS=redis://127.0.0.1:$redis_port/0
EOF
}

stop() {
  local dir=$1
  if [ -f "$dir/pg/data/postmaster.pid" ]; then
    runuser -u "$PG_USER" -- "$PG_BIN/pg_ctl" -D "$dir/pg/data" -m fast -w stop >/dev/null || true
  fi
  if [ -f "$dir/mariadb/pid" ]; then
    local pid
    pid=$(cat "$dir/mariadb/pid")
    kill "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  fi
  if [ -f "$dir/redis/pid" ]; then
    # Wait for it to exit: it writes its log and removes its pid file on the way out, and an
    # rm -rf of its directory racing that failed a whole green run once.
    local rpid
    rpid=$(cat "$dir/redis/pid")
    kill "$rpid" 2>/dev/null || true
    while kill -0 "$rpid" 2>/dev/null; do sleep 0.1; done
  fi
}

case "${1:-}" in
  install) install ;;
  start) install && start "${2:?usage: test-servers.sh start DIR}" ;;
  stop) stop "${2:?usage: test-servers.sh stop DIR}" ;;
  run)
    shift
    [ "${1:-}" = "--" ] && shift
    install
    dir=$(mktemp -d /tmp/retrycore-servers.XXXXXX)
    # The command's status is the script's: a cleanup that fails does not turn it red.
    trap 'status=$?; stop "$dir"; rm -rf "$dir" || echo "test-servers.sh: could not remove $dir" >&2; exit $status' EXIT
    start "$dir"
    # shellcheck disable=SC1091
    . "$dir/env"
    "$@"
    ;;
  *)
    sed -n '2,20p' "$0" >&2
    exit 2
    ;;
esac
