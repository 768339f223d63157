#!/usr/bin/env bash
# Measures linkout against nginx on loopback with wrk, in the same run, and prints Markdown tables.
#   bench/run.sh            (BENCH_SECONDS per run, default 5; BENCH_RUNS per cell, default 3)
# Both servers serve the same ~8 KB page; only 127.0.0.1 is used. Installs wrk and nginx from Debian if missing.
# Every row has p50/p99 latency and the server's CPU time per request (utime + stime from /proc/<pid>/stat,
# before and after the measured run, over the requests wrk counted; nginx: master and workers; a landing's until
# the server is idle again, so its fold into the tables counts with it). A flood row
# has 300 connections pipelining /healthz while a newcomer's latency is sampled (bench/newcomer.py).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
seconds=${BENCH_SECONDS:-5}
# Each cell runs this many times, nginx and linkout alternating, and keeps each server's best run: on a shared
# 2-core machine single runs swing by ±15%.
runs=${BENCH_RUNS:-3}
linkout_port=${BENCH_LINKOUT_PORT:-18080}
nginx_port=${BENCH_NGINX_PORT:-18081}
# A second linkout on a throwaway PostgreSQL (fsync on, synchronous commit: as durable as the SQLite default).
postgres_linkout_port=${BENCH_POSTGRES_LINKOUT_PORT:-18082}
postgres_port=${BENCH_POSTGRES_PORT:-18083}
# A second instance on the same database, for two instances' landings against one's.
postgres_second_port=${BENCH_POSTGRES_SECOND_PORT:-18084}

# shellcheck source=bench/install-missing.sh
. "$here/bench/install-missing.sh"
install_missing wrk nginx
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)

work=$(mktemp -d)
chmod 755 "$work"  # nginx workers run as www-data and must read the page
cleanup() {
  [[ -n ${linkout_pid:-} ]] && kill -TERM "$linkout_pid" 2>/dev/null || true
  [[ -n ${postgres_linkout_pid:-} ]] && kill -TERM "$postgres_linkout_pid" 2>/dev/null || true
  [[ -n ${postgres_second_pid:-} ]] && kill -TERM "$postgres_second_pid" 2>/dev/null || true
  "$here/scripts/postgres-throwaway.sh" stop "$work/postgres" 2>/dev/null || true
  [[ -f $work/nginx.pid ]] && "$nginx_bin" -c "$work/nginx.conf" -s stop 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The page: about 8 KB, the size of a checkout page. It is served as a stylesheet (`bench.css`): /static serves
# only what pages link (styles, images, icons, fonts), and the bytes and their cost are the same.
mkdir -p "$work/public"
python3 - "$work/public/bench.css" <<'PY'
import sys
words = ("linkout checkout token apple swift page fast secure local durable report " * 120)[:7900]
with open(sys.argv[1], "w") as f:
    f.write("<!doctype html><html lang=en><head><meta charset=utf-8><title>bench</title></head><body><main><p>")
    f.write(words)
    f.write("</p></main></body></html>\n")
PY

cat >"$work/nginx.conf" <<NGINX
worker_processes auto;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 4096; }
http {
  access_log off;
  default_type application/octet-stream;
  types { text/html html; text/css css; }
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$nginx_port;
    location /static/ { alias $work/public/; }
    location = /healthz { default_type text/plain; return 200 "ok\\n"; }
  }
}
NGINX

# linkout gets the repository's templates and locales beside the benchmark page.
cp -r "$here/Public/." "$work/public/"
cat >"$work/config.json" <<JSON
{
  "server": {
    "host": "127.0.0.1", "port": $linkout_port, "publicDir": "$work/public", "rateLimitPerSecond": 0,
    "maxConnectionsPerClient": 1024
  },
  "logging": { "level": "warning" }
}
JSON

cd "$here"
swift build -c release >/dev/null
"$nginx_bin" -c "$work/nginx.conf"
.build/release/linkout serve --config "$work/config.json" --data-dir "$work/data" >"$work/linkout.out" 2>"$work/linkout.err" &
linkout_pid=$!
for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$linkout_port/healthz" >/dev/null && curl -sf "http://127.0.0.1:$nginx_port/static/bench.css" >/dev/null && break
  sleep 0.1
done
cmp <(curl -s "http://127.0.0.1:$linkout_port/static/bench.css") <(curl -s "http://127.0.0.1:$nginx_port/static/bench.css")

POSTGRES_FSYNC=on scripts/postgres-throwaway.sh start "$work/postgres" "$postgres_port"
LINKOUT_DATABASE_URL="postgresql://postgres@127.0.0.1:$postgres_port/postgres" \
  .build/release/linkout serve --config "$work/config.json" --port "$postgres_linkout_port" \
  >"$work/linkout-postgres.out" 2>"$work/linkout-postgres.err" &
postgres_linkout_pid=$!
LINKOUT_DATABASE_URL="postgresql://postgres@127.0.0.1:$postgres_port/postgres" \
  .build/release/linkout serve --config "$work/config.json" --port "$postgres_second_port" \
  >"$work/linkout-postgres-second.out" 2>"$work/linkout-postgres-second.err" &
postgres_second_pid=$!
for port in "$postgres_linkout_port" "$postgres_second_port"; do
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done
done

hz=$(getconf CLK_TCK)
nginx_pids() { echo "$(cat "$work/nginx.pid") $(pgrep -P "$(cat "$work/nginx.pid")" | tr '\n' ' ')"; }
linkout_pids() { echo "$linkout_pid"; }
# The PostgreSQL server: its postmaster and the backends, checkpointer and WAL writer under it.
postgres_pids() {
  local main
  main=$(head -n 1 "$work/postgres/data/postmaster.pid")
  echo "$main $(pgrep -P "$main" | tr '\n' ' ')"
}

# cpu_ticks PID... -> utime + stime of those processes (all their threads), in clock ticks
cpu_ticks() {
  local total=0 pid rest fields
  for pid in "$@"; do
    rest=$(cat "/proc/$pid/stat" 2>/dev/null) || continue
    # Fields after the command name, which is in parentheses and may hold spaces: state is [0], utime [11].
    read -r -a fields <<<"${rest##*) }"
    total=$((total + fields[11] + fields[12]))
  done
  echo "$total"
}

# parse_wrk TICKS -> "requests_per_second p50_ms p99_ms cpu_us_per_request" from wrk --latency output on stdin
parse_wrk() {
  awk -v ticks="$1" -v hz="$hz" '
    function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
    /requests in/ { requests = $1 }
    /Requests\/sec/ { rps = $2 }
    $1 == "50%" { p50 = ms($2) }
    $1 == "99%" { p99 = ms($2) }
    END { printf "%.0f %.2f %.2f %.1f\n", rps, p50, p99, (requests > 0 ? ticks * 1e6 / hz / requests : 0) }'
}

# settled_cpu_ticks PID... -> cpu_ticks once the processes are idle (at most 2 ticks in half a second, or 120 s
# at most): a landing is not done when it is answered but when the ingester has folded it into the tables. Read
# before a landing run too, so the warm-up's landings are folded in before the count starts.
settled_cpu_ticks() {
  local previous now
  previous=$(cpu_ticks "$@")
  for _ in $(seq 1 240); do
    sleep 0.5
    now=$(cpu_ticks "$@")
    ((now - previous <= 2)) && break
    previous=$now
  done
  echo "$previous"
}

# run_wrk URL THREADS CONNECTIONS MODE "PIDS" -> "requests_per_second p50_ms p99_ms cpu_us_per_request"
# MODE: keep-alive, close, or landing (keep-alive, each request a fresh token through bench/landing.lua; its CPU
# counted until the server is idle again, the fold into the tables included)
run_wrk() {
  local url=$1 threads=$2 connections=$3 mode=$4 pids=$5 extra=() before after output
  [[ $mode == close ]] && extra=(-H "Connection: close")
  [[ $mode == landing ]] && extra=(-s "$here/bench/landing.lua")
  wrk -t"$threads" -c"$connections" -d1s "${extra[@]}" "$url" >/dev/null 2>&1 || true  # warm-up
  # shellcheck disable=SC2086  # PIDS is a list
  if [[ $mode == landing ]]; then before=$(settled_cpu_ticks $pids); else before=$(cpu_ticks $pids); fi
  output=$(wrk -t"$threads" -c"$connections" -d"${seconds}s" --latency "${extra[@]}" "$url" 2>&1 || true)
  # shellcheck disable=SC2086
  if [[ $mode == landing ]]; then after=$(settled_cpu_ticks $pids); else after=$(cpu_ticks $pids); fi
  printf '%s\n' "$output" | parse_wrk $((after - before))
}

# run_flood PORT "PIDS" -> "requests_per_second p50_ms p99_ms cpu_us_per_request newcomer_p50 newcomer_p99
# newcomer_samples newcomer_failures": 300 connections pipeline /healthz (16 deep) for the run while a newcomer
# opens a fresh connection every 20 ms and times one request. Bounded: wrk stops after the run, the sampler
# a second earlier.
run_flood() {
  local port=$1 pids=$2 before after output sampler samples=0 n_p50=0 n_p99=0 failures="?"
  sampler=$(mktemp -p "$work")
  # shellcheck disable=SC2086
  before=$(cpu_ticks $pids)
  (sleep 0.5 && python3 "$here/bench/newcomer.py" "$port" /healthz "$((seconds - 1))" >"$sampler") &
  local sampler_pid=$!
  output=$(wrk -t2 -c300 -d"${seconds}s" --latency -s "$here/bench/pipeline.lua" "http://127.0.0.1:$port/healthz" 2>&1 || true)
  # shellcheck disable=SC2086
  after=$(cpu_ticks $pids)
  wait "$sampler_pid" || true
  read -r samples n_p50 n_p99 failures <"$sampler" || true  # an empty file (sampler failed) keeps the zeros
  echo "$(printf '%s\n' "$output" | parse_wrk $((after - before))) $n_p50 $n_p99 $samples $failures"
}

# best line of several, by requests per second
best() { sort -k1,1 -n -r | head -n 1; }

echo "| load | nginx req/s | linkout req/s | linkout/nginx | nginx p50/p99 ms | linkout p50/p99 ms | nginx CPU µs/req | linkout CPU µs/req |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for cell in "1 4 keep-alive" "2 64 keep-alive" "1 4 close" "2 64 close"; do
  read -r threads connections mode <<<"$cell"
  nginx_runs=""
  linkout_runs=""
  for _ in $(seq 1 "$runs"); do
    nginx_runs+="$(run_wrk "http://127.0.0.1:$nginx_port/static/bench.css" "$threads" "$connections" "$mode" "$(nginx_pids)")"$'\n'
    linkout_runs+="$(run_wrk "http://127.0.0.1:$linkout_port/static/bench.css" "$threads" "$connections" "$mode" "$(linkout_pids)")"$'\n'
  done
  read -r n_rps n_p50 n_p99 n_cpu <<<"$(printf '%s' "$nginx_runs" | best)"
  read -r l_rps l_p50 l_p99 l_cpu <<<"$(printf '%s' "$linkout_runs" | best)"
  ratio=$(awk -v a="$l_rps" -v b="$n_rps" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
  echo "| static 8 KB, ${threads}t/${connections}c $mode | $n_rps | $l_rps | ${ratio}x | $n_p50 / $n_p99 | $l_p50 / $l_p99 | $n_cpu | $l_cpu |"
  # linkout's own static figures under the landing's load are what the landing is measured against.
  [[ $cell == "2 64 keep-alive" ]] && read -r static_rps static_p50 static_p99 static_cpu <<<"$l_rps $l_p50 $l_p99 $l_cpu"
done
nginx_runs=""
linkout_runs=""
for _ in $(seq 1 "$runs"); do
  nginx_runs+="$(run_wrk "http://127.0.0.1:$nginx_port/static/bench.css" 2 64 keep-alive "$(nginx_pids)")"$'\n'
  linkout_runs+="$(run_wrk "http://127.0.0.1:$linkout_port/" 2 64 landing "$(linkout_pids)")"$'\n'
done
read -r n_rps n_p50 n_p99 n_cpu <<<"$(printf '%s' "$nginx_runs" | best)"
read -r l_rps l_p50 l_p99 l_cpu <<<"$(printf '%s' "$linkout_runs" | best)"
ratio=$(awk -v a="$l_rps" -v b="$n_rps" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
echo "| landing (fresh token, decode + durable record + 303), 2t/64c keep-alive | $n_rps (static) | $l_rps | ${ratio}x | $n_p50 / $n_p99 (static) | $l_p50 / $l_p99 | $n_cpu (static) | $l_cpu |"
sqlite_landing_rps=$l_rps
sqlite_landing_cpu=$l_cpu
sqlite_landing_p99=$l_p99
postgres_runs=""
for _ in $(seq 1 "$runs"); do
  postgres_runs+="$(run_wrk "http://127.0.0.1:$postgres_linkout_port/" 2 64 landing "$postgres_linkout_pid $(postgres_pids)")"$'\n'
done
read -r p_rps p_p50 p_p99 p_cpu <<<"$(printf '%s' "$postgres_runs" | best)"
ratio=$(awk -v a="$p_rps" -v b="$n_rps" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
echo "| landing on PostgreSQL (the same, committed in PostgreSQL; CPU includes the database server), 2t/64c keep-alive | $n_rps (static) | $p_rps | ${ratio}x | $n_p50 / $n_p99 (static) | $p_p50 / $p_p99 | $n_cpu (static) | $p_cpu |"
nginx_runs=""
linkout_runs=""
for _ in $(seq 1 "$runs"); do
  nginx_runs+="$(run_flood "$nginx_port" "$(nginx_pids)")"$'\n'
  linkout_runs+="$(run_flood "$linkout_port" "$(linkout_pids)")"$'\n'
done
read -r n_rps _ _ n_cpu n_new50 n_new99 n_samples n_failed <<<"$(printf '%s' "$nginx_runs" | best)"
read -r l_rps _ _ l_cpu l_new50 l_new99 l_samples l_failed <<<"$(printf '%s' "$linkout_runs" | best)"
ratio=$(awk -v a="$l_rps" -v b="$n_rps" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
# wrk's own latency figures mean little for pipelined batches, so this row's p50/p99 are the newcomer's.
echo "| flood: /healthz, 2t/300c, 16 pipelined per connection; p50/p99 = a newcomer's request | $n_rps | $l_rps | ${ratio}x | $n_new50 / $n_new99 | $l_new50 / $l_new99 | $n_cpu | $l_cpu |"
echo
echo "| newcomer during the flood (fresh connection every 20 ms, one /healthz) | nginx | linkout |"
echo "| --- | ---: | ---: |"
echo "| samples (failed or over 5 s) | $n_samples ($n_failed) | $l_samples ($l_failed) |"
recorded=$(.build/release/linkout export --data-dir "$work/data" --config "$work/config.json" | tail -n +2 | wc -l)
postgres_recorded=$(psql -h 127.0.0.1 -p "$postgres_port" -U postgres -Atc "SELECT count(*) FROM tokens")
echo
echo "tokens recorded during the landing runs: $recorded (SQLite), $postgres_recorded (PostgreSQL)"
# Two instances on the one database, the same load split between them (1 thread, 32 connections each): the
# `token_days` roll-up takes one row per day from every landing, so this shows whether instances wait on it.
two_runs=""
for _ in $(seq 1 "$runs"); do
  first=$(mktemp -p "$work")
  second=$(mktemp -p "$work")
  wrk -t1 -c32 -d"${seconds}s" -s "$here/bench/landing.lua" "http://127.0.0.1:$postgres_linkout_port/" >"$first" 2>&1 &
  first_pid=$!
  wrk -t1 -c32 -d"${seconds}s" -s "$here/bench/landing.lua" "http://127.0.0.1:$postgres_second_port/" >"$second" 2>&1 &
  second_pid=$!
  wait "$first_pid" "$second_pid" || true
  two_runs+="$(awk '/Requests\/sec/ { total += $2 } END { printf "%.0f", total }' "$first" "$second")"$'\n'
done
two_rps=$(printf '%s' "$two_runs" | sort -n -r | head -n 1)
echo "two PostgreSQL instances, one database (landings/s, 1t/32c each): $two_rps; against one instance: $(awk -v a="$two_rps" -v b="$p_rps" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
echo "PostgreSQL landing / SQLite landing: $(awk -v a="$p_rps" -v b="$sqlite_landing_rps" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
echo
# The landing against linkout's own static page of the same size, under the same load (2 threads, 64
# connections, keep-alive), measured in this run: the ratios the performance goals are stated in.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
echo "| landing against linkout's own static 8 KB, 2t/64c keep-alive | static | landing | landing/static |"
echo "| --- | ---: | ---: | ---: |"
echo "| CPU µs per request (SQLite) | $static_cpu | $sqlite_landing_cpu | $(ratio "$sqlite_landing_cpu" "$static_cpu")x |"
echo "| p99 ms (SQLite) | $static_p99 | $sqlite_landing_p99 | $(ratio "$sqlite_landing_p99" "$static_p99")x |"
echo "| requests per second (SQLite) | $static_rps | $sqlite_landing_rps | $(ratio "$sqlite_landing_rps" "$static_rps")x |"
echo "| p99 ms (PostgreSQL) | $static_p99 | $p_p99 | $(ratio "$p_p99" "$static_p99")x |"
