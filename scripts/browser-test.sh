#!/usr/bin/env bash
# The browser tier: starts the given linkout binary on a free port with a throwaway data folder and config (the
# landing refuses visits without a token, so that page is reachable), then runs Tests/Browser/browser_test.py in
# headless Chromium against it. A second server sells through Paddle (`payments.provider: "paddle"`), pointed at
# Tests/Browser/fake_paddle.py, whose hosted checkout pays by sending the signed notification. The servers and the
# fake are stopped on every exit; the Python side quits Chromium and ChromeDriver itself. Screenshots go to
# docs/screenshots/.
#   scripts/browser-test.sh PATH_TO_LINKOUT
set -euo pipefail
binary=${1:?usage: browser-test.sh PATH_TO_LINKOUT}
here=$(cd "$(dirname "$0")/.." && pwd)
binary=$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")
started=$SECONDS
"$here/scripts/setup-browser.sh"

work=$(mktemp -d)
pid=""
paddle_pid=""
fake_pid=""
cleanup() {
  local started_pid
  for started_pid in $pid $paddle_pid $fake_pid; do
    kill "$started_pid" 2>/dev/null || true
    wait "$started_pid" 2>/dev/null || true
  done
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

# The Paddle server: a sandbox key (test mode), the fake's API and hosted checkout.
paddle_key=pdl_sdbx_apikey_01browser_$(openssl rand -hex 8)
paddle_secret=pdl_ntfset_01browser_$(openssl rand -hex 8)
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
  -keyout "$work/fake-key.pem" -out "$work/fake-cert.pem" 2>/dev/null
"$python" Tests/Browser/fake_paddle.py --api-key "$paddle_key" --secret "$paddle_secret" \
  --linkout-url-file "$work/paddle-linkout-url" --cert "$work/fake-cert.pem" --key "$work/fake-key.pem" \
  >"$work/fake-stdout" 2>"$work/fake-stderr" &
fake_pid=$!
for _ in $(seq 1 100); do
  grep -q "listening on" "$work/fake-stdout" 2>/dev/null && break
  sleep 0.1
done
fake=$(sed -nE 's/^fake paddle listening on (http:[^ ]+)$/\1/p' "$work/fake-stdout")
hosted=$(sed -nE 's/^fake paddle checkout on (https:[^ ]+)$/\1/p' "$work/fake-stdout")
[[ -n $fake && -n $hosted ]] || {
  cat "$work/fake-stderr" >&2; echo "browser-test: the fake Paddle did not start" >&2; exit 1
}
"$python" - "$work/config.json" "$work/paddle-config.json" "$fake" "$hosted" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config["payments"] = {"provider": "paddle", "defaultTaxCountry": config["payments"].get("defaultTaxCountry", "DEU"),
                      "paddle": {"apiBase": sys.argv[3], "checkoutURL": sys.argv[4] + "/checkout"}}
json.dump(config, open(sys.argv[2], "w"))
PY
LINKOUT_ADMIN_TOKEN=$admin_token LINKOUT_PADDLE_API_KEY=$paddle_key LINKOUT_PADDLE_WEBHOOK_SECRET=$paddle_secret \
  "$binary" serve --config "$work/paddle-config.json" --host 127.0.0.1 --port 0 --data-dir "$work/paddle-data" \
  >"$work/paddle-stdout" 2>"$work/paddle-stderr" &
paddle_pid=$!
for _ in $(seq 1 100); do
  grep -q "listening on" "$work/paddle-stdout" 2>/dev/null && break
  kill -0 "$paddle_pid" 2>/dev/null || {
    cat "$work/paddle-stderr" >&2; echo "browser-test: the Paddle server exited early" >&2; exit 1
  }
  sleep 0.1
done
paddle_url=$(sed -nE 's/^linkout listening on (http:[^ ]+)$/\1/p' "$work/paddle-stdout")
[[ -n $paddle_url ]] || { echo "browser-test: the Paddle server did not report its address" >&2; exit 1; }
echo "$paddle_url" >"$work/paddle-linkout-url"

status=0
LINKOUT_BIN=$binary LINKOUT_CONFIG=$work/config.json LINKOUT_ADMIN_TOKEN=$admin_token \
  LINKOUT_PADDLE_URL=$paddle_url LINKOUT_PADDLE_CONFIG=$work/paddle-config.json \
  LINKOUT_PADDLE_API_KEY=$paddle_key LINKOUT_PADDLE_WEBHOOK_SECRET=$paddle_secret \
  "$python" Tests/Browser/browser_test.py --base-url "$url" --screenshots docs/screenshots \
  --axe-wheel .build/browser-wheels/axe_selenium_python-3.0.0-py3-none-any.whl || status=$?
echo "browser-test: $((SECONDS - started)) s in total"
exit "$status"
