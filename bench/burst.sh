#!/usr/bin/env bash
# How the SQLite ledger takes a burst of landings as it grows, the ledger filled through real landings.
#   bench/burst.sh [SIZES]
#   SIZES: tokens in the ledger before each measured burst, default "0 1000000 10000000" (run in ascending order).
#   BENCH_BURST_SECONDS (the measured burst, default 8), BENCH_FILL_CHUNK_SECONDS (longest wrk run of a fill,
#   default 60), BENCH_FOLD_TIMEOUT_SECONDS (longest wait for the backlog to empty, default 3600), BENCH_PORT
#   and BENCH_APPLE_PORT (defaults 18093 and 18094), BENCH_LINKOUT (the linkout binary; default: a release
#   build of this checkout).
# One server runs throughout, reporting on against a fake Apple (bench/fake_apple.py). For each size it is
# filled by wrk (2 threads, 64 connections, a fresh token per request from bench/landing.lua) until the ledger
# holds SIZE tokens counted since the start, then left until /metrics shows an empty journal backlog
# (linkout_journal_backlog_visits = 0). Then: the operator's reads on the quiet ledger (median of 5, signed in
# as bench/growth_reads.py does), and a burst of BENCH_BURST_SECONDS with bench/burst_reads.py watching it
# until the backlog is empty again: the fold time, the peak backlog and RSS, and the token list and an
# unmatched search timed every 0.5 s meanwhile. Prints a Markdown table, one column per size, ratios to the
# first column. Only 127.0.0.1 is used.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
sizes=${1-0 1000000 10000000}
burst_seconds=${BENCH_BURST_SECONDS:-8}
chunk_limit=${BENCH_FILL_CHUNK_SECONDS:-60}
fold_timeout=${BENCH_FOLD_TIMEOUT_SECONDS:-3600}
# Not growth.sh's ports, so the two can run side by side.
port=${BENCH_PORT:-18093}
apple_port=${BENCH_APPLE_PORT:-18094}
admin_token=burst-bench-admin-token
landing_url="http://127.0.0.1:$port/"

# shellcheck source=bench/install-missing.sh
. "$here/bench/install-missing.sh"
install_missing wrk

work=$(mktemp -d)
chmod 755 "$work"
server_pid=""
apple_pid=""
wrk_pid=""
watch_pid=""

# stop PID: TERM, then KILL if it has not gone after SECONDS (the server flushes its journal on the way out).
stop() {
  local pid=$1 seconds=$2
  [[ -n $pid ]] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 $((seconds * 10))); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# Everything this script started, even after a failure or Ctrl-C: the children started with & ignore SIGINT.
cleanup() {
  stop "$wrk_pid" 5 || true
  stop "$watch_pid" 5 || true
  stop "$server_pid" 60 || true
  stop "$apple_pid" 5 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

cd "$here"
if [[ -n ${BENCH_LINKOUT:-} ]]; then
  linkout=$BENCH_LINKOUT
else
  swift build -c release --product linkout >/dev/null
  linkout=.build/release/linkout
fi

# shellcheck source=bench/reporting-server.sh
. bench/reporting-server.sh
export LINKOUT_ADMIN_TOKEN=$admin_token

start_server() {
  "$linkout" serve --config "$work/config.json" --data-dir "$work/data" >>"$work/linkout.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 600); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && return; sleep 0.5; done
  echo "burst.sh: the server did not get ready; its log:" >&2
  tail -n 20 "$work/linkout.log" >&2
  exit 1
}

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
rss_mb() { awk '/^VmRSS:/ { printf "%.0f", $2 / 1024 }' "/proc/$server_pid/status"; }
data_mb() { du -sb "$work/data" | awk '{ printf "%.0f", $1 / 1000000 }'; }

# run_wrk SECONDS [WRK OPTIONS...] -> wrk's report in $work/wrk.out. In the background and waited for, so that
# Ctrl-C or TERM reaches the trap at once rather than after the run.
run_wrk() {
  local seconds=$1
  shift
  wrk -t2 -c64 -d"${seconds}s" "$@" -s bench/landing.lua "$landing_url" >"$work/wrk.out" 2>&1 &
  wrk_pid=$!
  wait "$wrk_pid" || true
  wrk_pid=""
}

# landed_by_wrk -> the landings wrk's last run recorded: its requests less those answered with an error.
# Socket errors (timeouts, resets) are told on stderr: such a request may or may not have landed. wrk does not
# count the requests in flight when it stops (up to one per connection), though they land: the ledger holds up
# to 64 tokens per wrk run more than counted.
landed_by_wrk() {
  awk '
    /requests in/ { requests = $1 }
    /Non-2xx or 3xx responses:/ { failed = $NF }
    /Socket errors:/ { print "burst.sh: wrk: " $0 > "/dev/stderr" }
    END { if (failed) print "burst.sh: wrk: " failed " landings answered with an error" > "/dev/stderr"
          print requests - failed }' "$work/wrk.out"
}

# fill SIZE: landings until $landed reaches SIZE, then the wait for an empty backlog. Each wrk run is as long as
# the last run's rate says the rest needs (rounded down, at least 1 s, at most chunk_limit), so the fill ends
# within about a second's landings past SIZE. Sets fill_seconds and fill_rate ("-" when nothing was needed).
fill() {
  local size=$1 began rate=0 chunk remaining before=$landed n
  fill_seconds="-"
  fill_rate="-"
  ((landed < size)) || return 0
  began=$(now)
  while ((landed < size)); do
    remaining=$((size - landed))
    chunk=2  # the first run only measures the rate
    ((rate > 0)) && chunk=$((remaining / rate))
    ((chunk < 1)) && chunk=1
    ((chunk > chunk_limit)) && chunk=$chunk_limit
    run_wrk "$chunk"
    n=$(landed_by_wrk)
    ((n > 0)) || { echo "burst.sh: a fill run landed nothing; wrk said:" >&2; cat "$work/wrk.out" >&2; exit 1; }
    landed=$((landed + n))
    rate=$((n / chunk))
  done
  python3 bench/burst_reads.py settle "$port"
  fill_seconds=$(elapsed "$began" "$(now)")
  # The rate the ledger took them at: until they were all in the tables, not only acknowledged.
  fill_rate=$(awk -v n=$((landed - before)) -v s="$fill_seconds" 'BEGIN { printf "%.0f", n / s }')
}

# burst: sets burst_fields to "rate p99_ms landings" and bench/burst_reads.py fold's line, the watcher running
# from before wrk's start until the backlog is empty again after its end. (Not called in $(...): its wrk and
# watcher must stay this shell's children for the trap, and $landed must keep what it adds.)
burst() {
  local began ended rate p99 n
  rm -f "$work/mark" "$work/mark.ready"
  python3 bench/burst_reads.py fold "$port" "$admin_token" "$server_pid" "$work/mark" >"$work/fold.out" &
  watch_pid=$!
  # The watcher signed in and sampling before the first landing.
  while [[ ! -e $work/mark.ready ]]; do
    kill -0 "$watch_pid" 2>/dev/null || { echo "burst.sh: the burst's watcher did not start" >&2; exit 1; }
    sleep 0.1
  done
  began=$(now)
  run_wrk "$burst_seconds" --latency
  ended=$(now)
  echo "$began $ended" >"$work/mark"
  n=$(landed_by_wrk)
  landed=$((landed + n))
  read -r rate p99 < <(awk '
    function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
    /Requests\/sec/ { rps = $2 }
    $1 == "99%" { p99 = ms($2) }
    END { printf "%.0f %.1f\n", rps, p99 }' "$work/wrk.out")
  wait_for_watcher
  burst_fields="$rate $p99 $n $(cat "$work/fold.out")"
}

# The watcher ends by itself once the backlog is empty; a ledger that never folds the burst is a finding too,
# so it is stopped after fold_timeout rather than waited on forever.
wait_for_watcher() {
  local deadline=$((SECONDS + fold_timeout))
  while kill -0 "$watch_pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
  if kill -0 "$watch_pid" 2>/dev/null; then
    echo "burst.sh: the backlog did not empty within ${fold_timeout}s of the burst" >&2
    exit 1
  fi
  wait "$watch_pid" || { echo "burst.sh: the burst's watcher failed" >&2; exit 1; }
  watch_pid=""
}

# measure SIZE: appends one row to rows: size tokens fill_s fill_rate | burst: rate p99 landings | fold: fold_s
# total_s peak_backlog peak_age peak_rss_kb tokens_med tokens_max find_med find_max samples | quiet: dashboard
# chart find tokens metrics | rss_after_mb data_mb
measure() {
  local size=$1 tokens quiet
  fill "$size"
  tokens=$landed
  quiet=$(python3 bench/burst_reads.py quiet "$port" "$admin_token" 5)
  burst
  rows+=("$size $tokens $fill_seconds $fill_rate $burst_fields $quiet $(rss_mb) $(data_mb)")
}

# table <rows -> the Markdown table, one column per size; the fields are measure's.
table() {
  awk '
    function ratio(v, e) { return (e > 0 && v != "-") ? sprintf(" (%.2f×)", v / e) : "" }
    function size(n) { return n >= 1000000 ? sprintf("%.0f M", n / 1000000) : (n >= 1000 ? sprintf("%.0f k", n / 1000) : n) }
    function row(name, c, with_ratio,   r) {
      printf "| %s | ", name
      for (r = 1; r <= n; r++) printf "%s%s | ", v[r, c], (with_ratio && r > 1 ? ratio(v[r, c], v[1, c]) : "")
      printf "\n"
    }
    function pair(name, a, b,   r) {
      printf "| %s | ", name
      for (r = 1; r <= n; r++) printf "%s / %s | ", v[r, a], v[r, b]
      printf "\n"
    }
    { for (i = 1; i <= NF; i++) v[NR, i] = $i; n = NR; v[NR, 12] = sprintf("%.0f", $12 / 1024) }
    END {
      printf "| | "; for (r = 1; r <= n; r++) printf "%s | ", size(v[r, 1]); printf "\n"
      printf "| --- |"; for (r = 1; r <= n; r++) printf " ---: |"; printf "\n"
      row("tokens in the ledger before the burst (as wrk counted them)", 2)
      row("fill (s)", 3)
      row("fill landing rate, until the backlog was empty (/s)", 4)
      row("burst landing rate (/s)", 5, 1)
      row("burst p99 (ms)", 6, 1)
      row("burst landings", 7)
      row("peak backlog (visits)", 10)
      row("peak backlog age (s)", 11)
      row("fold: wrk end to empty backlog (s)", 8, 1)
      row("burst start to empty backlog (s)", 9, 1)
      pair("GET /admin/tokens?limit=50 during burst and fold, median / max (ms)", 13, 14)
      pair("GET /admin/find?q=bench-nomatch during burst and fold, median / max (ms)", 15, 16)
      row("reads sampled during burst and fold", 17)
      row("quiet GET /admin (ms)", 18, 1)
      row("quiet GET /admin/chart.svg (ms)", 19, 1)
      row("quiet GET /admin/find?q=bench-nomatch (ms)", 20, 1)
      row("quiet GET /admin/tokens?limit=50 (ms)", 21, 1)
      row("quiet GET /metrics (ms)", 22, 1)
      row("peak RSS during burst and fold (MB)", 12)
      row("RSS after the fold (MB)", 23)
      row("data folder after the fold (MB)", 24)
    }'
}

# The server's complaints during the run: a benchmark that hides them would measure a server in trouble.
report_log() {
  local count
  count=$(grep -c '"level":"\(warning\|error\|critical\)"' "$work/linkout.log" || true)
  ((count > 0)) || return 0
  printf '\nThe server logged %s warnings or errors; the last ones:\n\n' "$count"
  grep '"level":"\(warning\|error\|critical\)"' "$work/linkout.log" | tail -n 5
}

start_server
# The gauge the fills and bursts wait on; an older linkout without it fails here rather than midway.
python3 bench/burst_reads.py settle "$port"
landed=0
rows=()
for size in $(printf '%s\n' "$sizes" | tr ' ' '\n' | grep . | sort -n); do
  echo "burst.sh: size $size" >&2
  measure "$size"
done
echo
printf '%s\n' "${rows[@]}" | table
report_log
