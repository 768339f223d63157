#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests, from Debian's packages: `start DIR PORT` creates a cluster in DIR
# and starts it on 127.0.0.1:PORT (trust auth, fsync off: test data only; POSTGRES_FSYNC=on for benchmarks that
# must pay for durability as in production); `stop DIR` stops it and deletes DIR.
# initdb and pg_ctl refuse to run as root, so they run as the `postgres` user; clients connect over TCP.
set -euo pipefail
cmd=${1:?usage: postgres-throwaway.sh start|stop DIR [PORT]}
dir=${2:?usage: postgres-throwaway.sh start|stop DIR [PORT]}
port=${3:-55432}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[[ -x $bin/initdb ]] || { echo "postgres-throwaway: no PostgreSQL server installed (apt-get install postgresql)" >&2; exit 1; }
as_postgres() {
  if [[ $(id -u) == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}
case $cmd in
start)
  mkdir -p "$dir"
  chmod 755 "$dir"
  [[ $(id -u) == 0 ]] && chown postgres:postgres "$dir"
  as_postgres "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync >"$dir/initdb.log"
  if ! as_postgres "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=${POSTGRES_FSYNC:-off} -c max_connections=1000" start >/dev/null; then
    echo "postgres-throwaway: the server did not start; its log:" >&2
    tail -n 20 "$dir/server.log" >&2
    exit 1
  fi
  ;;
stop)
  [[ -d $dir/data ]] && as_postgres "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
  ;;
*)
  echo "usage: postgres-throwaway.sh start|stop DIR [PORT]" >&2
  exit 2
  ;;
esac
