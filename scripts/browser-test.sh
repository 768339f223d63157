#!/usr/bin/env bash
# The browser tier: starts the given linkout binary on a free port with a throwaway data folder and config (the
# landing refuses visits without a token, so that page is reachable), then runs Tests/Browser/browser_test.py in
# headless Chromium against it. The server is stopped on every exit; the Python side quits Chromium and
# ChromeDriver itself. Screenshots go to docs/screenshots/.
#   scripts/browser-test.sh PATH_TO_LINKOUT
set -euo pipefail
binary=${1:?usage: browser-test.sh PATH_TO_LINKOUT}
here=$(cd "$(dirname "$0")/.." && pwd)
binary=$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")
started=$SECONDS
"$here/scripts/setup-browser.sh"

work=$(mktemp -d)
pid=""
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

cd "$here"
python=$here/.build/browser-venv/bin/python
"$python" - config.json "$work/config.json" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config["landing"]["allowWithoutToken"] = False
json.dump(config, open(sys.argv[2], "w"))
PY
admin_token=$(openssl rand -hex 24)
LINKOUT_ADMIN_TOKEN=$admin_token "$binary" serve --config "$work/config.json" --host 127.0.0.1 --port 0 \
  --data-dir "$work/data" >"$work/stdout" 2>"$work/stderr" &
pid=$!
for _ in $(seq 1 100); do
  grep -q "listening on" "$work/stdout" 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/stderr" >&2; echo "browser-test: server exited early" >&2; exit 1; }
  sleep 0.1
done
url=$(sed -nE 's/^linkout listening on (http:[^ ]+)$/\1/p' "$work/stdout")
[[ -n $url ]] || { echo "browser-test: server did not report its address" >&2; exit 1; }

status=0
LINKOUT_BIN=$binary LINKOUT_CONFIG=$work/config.json LINKOUT_ADMIN_TOKEN=$admin_token \
  "$python" Tests/Browser/browser_test.py --base-url "$url" --screenshots docs/screenshots \
  --axe-wheel .build/browser-wheels/axe_selenium_python-3.0.0-py3-none-any.whl || status=$?
echo "browser-test: $((SECONDS - started)) s in total"
exit "$status"
