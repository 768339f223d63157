#!/usr/bin/env bash
# What the operator's reads, the landing rate, the reporting planner and an idle server cost as the ledger grows.
#   bench/growth.sh [SQLITE_SIZES] [POSTGRES_SIZES]
#   defaults: "0 1000000 10000000" and "0 1000000" (tokens; "" skips an engine); BENCH_SECONDS (wrk landing
#   run, default 10), BENCH_RUNS (landing runs per size, the best kept, default 3), BENCH_IDLE_SECONDS (idle
#   window, default 30), BENCH_DAYS (days the fill spans, default 365).
# One ledger per engine grows through the sizes: `linkout-bench seed` fills it with landings whose NO_LINE_ITEM
# report Apple accepted (first seen evenly over the year before three days ago, written through the storage
# layer in large transactions, server stopped), then a release build serves it with reporting on against a fake
# Apple (bench/fake_apple.py) and is measured: each read's median of 5 (bench/growth_reads.py), the planner's
# pass (median of 5, `linkout-bench plan`, beside the server), linkout's CPU over an idle window (utime + stime
# from /proc/PID/stat, no requests), the data folder, and the landing rate (wrk, 2 threads, 64 connections,
# fresh tokens from bench/landing.lua, best of BENCH_RUNS; its tokens stay for the next size). Prints a Markdown table per engine
# with each figure's ratio to the empty ledger of the same run. Only 127.0.0.1 is used.
# bench/burst.sh: a burst of landings against a ledger filled through real landings instead of seeded.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
sqlite_sizes=${1-0 1000000 10000000}
postgres_sizes=${2-0 1000000}
seconds=${BENCH_SECONDS:-10}
runs=${BENCH_RUNS:-3}
idle_seconds=${BENCH_IDLE_SECONDS:-30}
days=${BENCH_DAYS:-365}
port=${BENCH_PORT:-18090}
apple_port=${BENCH_APPLE_PORT:-18091}
postgres_port=${BENCH_POSTGRES_PORT:-18092}
admin_token=growth-bench-admin-token

# shellcheck source=bench/install-missing.sh
. "$here/bench/install-missing.sh"
install_missing wrk
work=$(mktemp -d)
chmod 755 "$work"
server_pid=""
apple_pid=""
cleanup() {
  [[ -n $server_pid ]] && kill -TERM "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
  [[ -n $apple_pid ]] && kill -TERM "$apple_pid" 2>/dev/null || true
  "$here/scripts/postgres-throwaway.sh" stop "$work/postgres" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

cd "$here"
swift build -c release --product linkout >/dev/null
swift build -c release --product linkout-bench >/dev/null
linkout=.build/release/linkout
bench=.build/release/linkout-bench

# shellcheck source=bench/reporting-server.sh
. bench/reporting-server.sh
export LINKOUT_ADMIN_TOKEN=$admin_token
ticks=$(getconf CLK_TCK)

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

start_server() {
  "$linkout" serve --config "$work/config.json" --data-dir "$work/data" >>"$work/linkout.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 600); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && return; sleep 0.5; done
  echo "growth.sh: the server did not get ready; its log:" >&2
  tail -n 20 "$work/linkout.log" >&2
  exit 1
}

stop_server() {
  kill -TERM "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}

# data_bytes ENGINE -> bytes of the ledger (SQLite: the data folder; PostgreSQL: its data folder less the WAL)
data_bytes() {
  if [[ $1 == sqlite ]]; then du -sb "$work/data" | cut -f1
  else du -sb --exclude=pg_wal "$work/postgres/data" | cut -f1; fi
}

# measure ENGINE SIZE -> one line: size fill_s dashboard chart find tokens metrics plan_ms idle_pct bytes rate
measure() {
  local engine=$1 size=$2 tokens=$3 reads plan idle before after bytes rate warm measured
  start_server
  sleep 2
  reads=$(python3 bench/growth_reads.py "$port" "$admin_token" 5)
  plan=$("$bench" plan --runs 5 --config "$work/config.json" --data-dir "$work/data" | awk '{ print $2 }')
  before=$(cpu_ticks "$server_pid")
  sleep "$idle_seconds"
  after=$(cpu_ticks "$server_pid")
  idle=$(awk -v d=$((after - before)) -v t="$ticks" -v s="$idle_seconds" 'BEGIN { printf "%.2f", 100 * d / t / s }')
  bytes=$(data_bytes "$engine")
  warm=$(wrk -t2 -c64 -d2s -s bench/landing.lua "http://127.0.0.1:$port/" 2>&1 || true)
  measured=""
  for _ in $(seq 1 "$runs"); do
    measured+=$(wrk -t2 -c64 -d"${seconds}s" -s bench/landing.lua "http://127.0.0.1:$port/" 2>&1 || true)$'\n'
  done
  # The best of the runs: on a shared 2-core machine single runs swing with what else runs.
  rate=$(awk '/Requests\/sec/ { if ($2 > best) best = $2 } END { printf "%d", best }' <<<"$measured")
  stop_server
  # Every request of both runs landed a fresh token: they are in the ledger of the next size.
  landed=$((landed + $(awk '/requests in/ { print $1 }' <<<"$warm$measured" | paste -sd+ | bc)))
  echo "$size $(awk '{ printf "%s ", $2 }' <<<"$reads")$plan $idle $bytes $rate $tokens"
}

# run ENGINE SIZES... -> the table
run() {
  local engine=$1 seeded=0 began fill
  landed=0
  shift
  local largest=0
  for size in "$@"; do ((size > largest)) && largest=$size; done
  local rows=()
  for size in "$@"; do
    began=$(date +%s)
    if ((size > seeded)); then
      "$bench" seed --tokens $((size - seeded)) --from "$seeded" --total "$largest" --days "$days" \
        --config "$work/config.json" --data-dir "$work/data" >>"$work/seed.log"
      seeded=$size
    fi
    fill=$(($(date +%s) - began))
    measure "$engine" "$size" $((size + landed)) >"$work/row"
    rows+=("$(cat "$work/row") $fill")
  done
  printf '\n%s\n\n' "$engine"
  printf '%s\n' "${rows[@]}" | awk '
    function ratio(v, e) { return e > 0 ? sprintf(" (%.2f×)", v / e) : "" }
    function size(n) { return n >= 1000000 ? sprintf("%.0f M", n / 1000000) : (n >= 1000 ? sprintf("%.0f k", n / 1000) : n) }
    NR == 1 { for (i = 1; i <= NF; i++) e[i] = $i }
    { for (i = 1; i <= NF; i++) v[NR, i] = $i; n = NR }
    END {
      printf "| | "; for (r = 1; r <= n; r++) printf "%s | ", size(v[r, 1]); printf "\n"
      printf "| --- |"; for (r = 1; r <= n; r++) printf " ---: |"; printf "\n"
      split("GET /admin (ms)|GET /admin/chart.svg (ms)|GET /admin/find?q= (ms)|GET /admin/tokens?limit=50 (ms)|GET /metrics (ms)|planner pass (ms)|idle CPU (% of a core)", names, "|")
      for (c = 2; c <= 8; c++) {
        printf "| %s | ", names[c - 1]
        for (r = 1; r <= n; r++) printf "%s%s | ", v[r, c], (r > 1 && c <= 6 ? ratio(v[r, c], e[c]) : "")
        printf "\n"
      }
      printf "| landing rate (/s) | "
      for (r = 1; r <= n; r++) printf "%s%s | ", v[r, 10], (r > 1 ? ratio(v[r, 10], e[10]) : "")
      printf "\n| tokens in the ledger | "; for (r = 1; r <= n; r++) printf "%s | ", v[r, 11]
      printf "\n| data folder | "
      for (r = 1; r <= n; r++) {
        per = v[r, 11] > e[11] ? sprintf(" (%.0f B per landing)", (v[r, 9] - e[9]) / (v[r, 11] - e[11])) : ""
        printf "%.0f MB%s | ", v[r, 9] / 1000000, per
      }
      printf "\n| fill (s) | "; for (r = 1; r <= n; r++) printf "%s | ", v[r, 12]; printf "\n"
    }'
}

if [[ -n $sqlite_sizes ]]; then
  # shellcheck disable=SC2086
  run sqlite $sqlite_sizes
fi
if [[ -n $postgres_sizes ]]; then
  rm -rf "$work/data"
  POSTGRES_FSYNC=on scripts/postgres-throwaway.sh start "$work/postgres" "$postgres_port"
  export LINKOUT_DATABASE_URL="postgresql://postgres@127.0.0.1:$postgres_port/postgres"
  # shellcheck disable=SC2086
  run postgres $postgres_sizes
fi
