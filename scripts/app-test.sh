#!/usr/bin/env bash
# The app tier: apps without a backend, tested from outside the Swift code. Starts the given linkout binary on a
# free port (demo provider, a throwaway data folder, rate limits off, 127.0.0.1 trusted as the proxy so the test
# names its clients in X-Forwarded-For), then runs Tests/App/app_test.py against it: a demo purchase, the app's
# redemption, the entitlement verified with PyJWT and the published JWKS, replayed and guessed codes, a key
# rotation, a refund, a revoked credential, and the log searched for secrets. PyJWT goes into a venv under
# .build/ when missing; a tool that cannot be installed fails the tier. The server is stopped on every exit.
#   scripts/app-test.sh PATH_TO_LINKOUT
set -euo pipefail
binary=${1:?usage: app-test.sh PATH_TO_LINKOUT}
here=$(cd "$(dirname "$0")/.." && pwd)
binary=$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")
started=$SECONDS
venv=$here/.build/app-venv
pyjwt_version=2.10.1

if ! dpkg-query -W -f='${Status}' python3-venv 2>/dev/null | grep -q "install ok installed"; then
  echo "app-test: installing python3-venv" >&2
  sudo=""
  [[ $(id -u) == 0 ]] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q python3-venv
fi
if ! "$venv/bin/python" -c "import jwt, cryptography, sys; sys.exit(jwt.__version__ != '$pyjwt_version')" 2>/dev/null
then
  echo "app-test: creating $venv with PyJWT $pyjwt_version" >&2
  rm -rf "$venv"
  python3 -m venv "$venv" || { echo "app-test: cannot create a venv (install python3-venv)" >&2; exit 1; }
  "$venv/bin/pip" install -q --disable-pip-version-check "PyJWT[crypto]==$pyjwt_version" \
    || { echo "app-test: cannot install PyJWT from PyPI" >&2; exit 1; }
fi

work=$(mktemp -d)
pid=""
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

cd "$here"
"$venv/bin/python" - config.json "$work/config.json" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config["server"]["rateLimitPerSecond"] = 0
config["server"]["trustedProxies"] = ["127.0.0.1"]
config["payments"] = {"provider": "demo"}
json.dump(config, open(sys.argv[2], "w"))
PY
admin_token=$(openssl rand -hex 24)
LINKOUT_ADMIN_TOKEN=$admin_token "$binary" serve --config "$work/config.json" --host 127.0.0.1 --port 0 \
  --data-dir "$work/data" >"$work/stdout" 2>"$work/stderr" &
pid=$!
for _ in $(seq 1 100); do
  grep -q "listening on" "$work/stdout" 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/stderr" >&2; echo "app-test: server exited early" >&2; exit 1; }
  sleep 0.1
done
url=$(sed -nE 's/^linkout listening on (http:[^ ]+)$/\1/p' "$work/stdout")
[[ -n $url ]] || { echo "app-test: server did not report its address" >&2; exit 1; }
public_url=$("$venv/bin/python" -c "import json,sys; print(json.load(open(sys.argv[1]))['server']['publicURL'])" \
  "$work/config.json")

status=0
"$venv/bin/python" Tests/App/app_test.py --url "$url" --public-url "$public_url" --admin-token "$admin_token" \
  --data-dir "$work/data" --config "$work/config.json" --linkout "$binary" \
  --log "$work/stdout" --log "$work/stderr" || status=$?
echo "app-test: $((SECONDS - started)) s in total"
exit "$status"
