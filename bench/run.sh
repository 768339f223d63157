#!/usr/bin/env bash
# Measures linkout against nginx on loopback with wrk, in the same run, and prints a Markdown table.
#   bench/run.sh            (BENCH_SECONDS per run, default 5; BENCH_RUNS per cell, default 3)
# Both servers serve the same ~8 KB page; only 127.0.0.1 is used. Installs wrk and nginx from Debian if missing.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
seconds=${BENCH_SECONDS:-5}
# Each cell runs this many times, nginx and linkout alternating, and keeps each server's best run: on a shared
# 2-core machine single runs swing by ±15%.
runs=${BENCH_RUNS:-3}
linkout_port=${BENCH_LINKOUT_PORT:-18080}
nginx_port=${BENCH_NGINX_PORT:-18081}

need=()
command -v wrk >/dev/null || need+=(wrk)
command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || need+=(nginx)
if ((${#need[@]})); then
  sudo=""
  [[ $(id -u) == 0 ]] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${need[@]}"
fi
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)

work=$(mktemp -d)
chmod 755 "$work"  # nginx workers run as www-data and must read the page
cleanup() {
  [[ -n ${linkout_pid:-} ]] && kill -TERM "$linkout_pid" 2>/dev/null || true
  [[ -f $work/nginx.pid ]] && "$nginx_bin" -c "$work/nginx.conf" -s stop 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The page: about 8 KB of HTML, the size of a checkout page.
mkdir -p "$work/public"
python3 - "$work/public/page.html" <<'PY'
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
  types { text/html html; }
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$nginx_port;
    location /static/ { alias $work/public/; }
  }
}
NGINX

# linkout gets the repository's templates and locales beside the benchmark page.
cp -r "$here/Public/." "$work/public/"
cat >"$work/config.json" <<JSON
{
  "server": { "host": "127.0.0.1", "port": $linkout_port, "publicDir": "$work/public", "rateLimitPerSecond": 0 },
  "logging": { "level": "warning" }
}
JSON

cd "$here"
swift build -c release >/dev/null
"$nginx_bin" -c "$work/nginx.conf"
.build/release/linkout serve --config "$work/config.json" --data-dir "$work/data" >"$work/linkout.out" 2>"$work/linkout.err" &
linkout_pid=$!
for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$linkout_port/healthz" >/dev/null && curl -sf "http://127.0.0.1:$nginx_port/static/page.html" >/dev/null && break
  sleep 0.1
done
cmp <(curl -s "http://127.0.0.1:$linkout_port/static/page.html") <(curl -s "http://127.0.0.1:$nginx_port/static/page.html")

# run_wrk URL THREADS CONNECTIONS MODE -> "requests_per_second p50_ms p99_ms"
# MODE: keep-alive, close, or landing (keep-alive, each request a fresh token through bench/landing.lua)
run_wrk() {
  local url=$1 threads=$2 connections=$3 mode=$4 extra=()
  [[ $mode == close ]] && extra=(-H "Connection: close")
  [[ $mode == landing ]] && extra=(-s "$here/bench/landing.lua")
  wrk -t"$threads" -c"$connections" -d1s "${extra[@]}" "$url" >/dev/null 2>&1 || true  # warm-up
  wrk -t"$threads" -c"$connections" -d"${seconds}s" --latency "${extra[@]}" "$url" 2>&1 | awk '
    function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
    /Requests\/sec/ { rps = $2 }
    $1 == "50%" { p50 = ms($2) }
    $1 == "99%" { p99 = ms($2) }
    END { printf "%.0f %.2f %.2f\n", rps, p50, p99 }'
}

# best "rps p50 p99" of several lines, by rps
best() { sort -k1,1 -n -r | head -n 1; }

echo "| load | nginx req/s | linkout req/s | linkout/nginx | nginx p50/p99 ms | linkout p50/p99 ms |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for cell in "1 4 keep-alive" "2 64 keep-alive" "1 4 close" "2 64 close"; do
  read -r threads connections mode <<<"$cell"
  nginx_runs=""
  linkout_runs=""
  for _ in $(seq 1 "$runs"); do
    nginx_runs+="$(run_wrk "http://127.0.0.1:$nginx_port/static/page.html" "$threads" "$connections" "$mode")"$'\n'
    linkout_runs+="$(run_wrk "http://127.0.0.1:$linkout_port/static/page.html" "$threads" "$connections" "$mode")"$'\n'
  done
  read -r n_rps n_p50 n_p99 <<<"$(printf '%s' "$nginx_runs" | best)"
  read -r l_rps l_p50 l_p99 <<<"$(printf '%s' "$linkout_runs" | best)"
  ratio=$(awk -v a="$l_rps" -v b="$n_rps" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
  echo "| static 8 KB, ${threads}t/${connections}c $mode | $n_rps | $l_rps | ${ratio}x | $n_p50 / $n_p99 | $l_p50 / $l_p99 |"
done
nginx_runs=""
linkout_runs=""
for _ in $(seq 1 "$runs"); do
  nginx_runs+="$(run_wrk "http://127.0.0.1:$nginx_port/static/page.html" 2 64 keep-alive)"$'\n'
  linkout_runs+="$(run_wrk "http://127.0.0.1:$linkout_port/" 2 64 landing)"$'\n'
done
read -r n_rps _ _ <<<"$(printf '%s' "$nginx_runs" | best)"
read -r l_rps l_p50 l_p99 <<<"$(printf '%s' "$linkout_runs" | best)"
ratio=$(awk -v a="$l_rps" -v b="$n_rps" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
echo "| landing (fresh token, decode + durable record + 303), 2t/64c keep-alive | $n_rps (static) | $l_rps | ${ratio}x | | $l_p50 / $l_p99 |"
recorded=$(.build/release/linkout export --data-dir "$work/data" --config "$work/config.json" | tail -n +2 | wc -l)
echo
echo "tokens recorded during the landing run: $recorded"
