#!/usr/bin/env bash
# Starts the given linkout binary on a free port with a throwaway data folder, runs scripts/smoke.sh against it,
# stops it with SIGTERM and checks that it exits 0.
set -euo pipefail
binary=${1:?usage: smoke-release.sh PATH_TO_LINKOUT}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT

cd "$here"
"$binary" serve --host 127.0.0.1 --port 0 --data-dir "$work/data" >"$work/stdout" 2>"$work/stderr" &
pid=$!
for _ in $(seq 1 100); do
  grep -q "listening on" "$work/stdout" 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/stderr" >&2; echo "smoke: server exited early" >&2; exit 1; }
  sleep 0.1
done
url=$(sed -nE 's/^linkout listening on (http:[^ ]+)$/\1/p' "$work/stdout" | sed 's/0\.0\.0\.0/127.0.0.1/')
[[ -n $url ]] || { echo "smoke: server did not report its address" >&2; exit 1; }
scripts/smoke.sh "$url"
LINKOUT_BIN="$binary" scripts/demo-purchase.sh "$url"
# The purchase is a LINE_ITEM report waiting in the outbox (no Apple credentials here): dry-run prints its body.
# The payment event is acted on in the background just after the result page: give it up to ten seconds.
found=""
for _ in $(seq 1 50); do
  if "$binary" report --dry-run --data-dir "$work/data" | grep -q '"status":"LINE_ITEM"'; then
    found=yes
    break
  fi
  sleep 0.2
done
[[ -n $found ]] || { echo "smoke: the demo purchase is not a LINE_ITEM report" >&2; exit 1; }
echo "smoke: the demo purchase is queued as a LINE_ITEM report"
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
[[ $status == 0 ]] || { echo "smoke: server exited with $status after SIGTERM" >&2; cat "$work/stderr" >&2; exit 1; }
echo "smoke: SIGTERM exit code 0"
