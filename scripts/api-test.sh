#!/usr/bin/env bash
# The API tier: checks Public/openapi.json with openapi-spec-validator, then runs Schemathesis with every check
# against the given linkout binary, started on a free port with a throwaway data folder and a config that sets
# API and admin tokens, turns rate limits off and sends nothing off this machine (Stripe's and Apple's URLs point
# at a closed local port; there is no App Store Connect key, so no report is sent). The server is stopped on
# every exit. Pinned tools go into a venv under .build/ when missing; a tool that cannot be installed fails the
# tier, as does any finding.
#   scripts/api-test.sh PATH_TO_LINKOUT [SCHEMATHESIS OPTIONS...]   (e.g. --include-operation-id listTokens)
set -euo pipefail
binary=${1:?usage: api-test.sh PATH_TO_LINKOUT [SCHEMATHESIS OPTIONS...]}
shift
here=$(cd "$(dirname "$0")/.." && pwd)
binary=$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")
started=$SECONDS
venv=$here/.build/api-venv
validator_version=0.9.0
schemathesis_version=4.32.5
# Examples per operation and phase: enough to cover each operation's statuses, small enough for about a minute.
max_examples=${API_TEST_MAX_EXAMPLES:-50}

# Debian's python3 needs python3-venv for `python3 -m venv` (as in scripts/setup-browser.sh).
if ! dpkg-query -W -f='${Status}' python3-venv 2>/dev/null | grep -q "install ok installed"; then
  echo "api-test: installing python3-venv" >&2
  sudo=""
  [[ $(id -u) == 0 ]] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q python3-venv
fi
if ! "$venv/bin/python" - "$validator_version" "$schemathesis_version" 2>/dev/null <<'PY'
import sys
from importlib.metadata import version
sys.exit(version("openapi-spec-validator") != sys.argv[1] or version("schemathesis") != sys.argv[2])
PY
then
  echo "api-test: creating $venv with openapi-spec-validator $validator_version, schemathesis $schemathesis_version" >&2
  rm -rf "$venv"
  python3 -m venv "$venv" || { echo "api-test: cannot create a venv (install python3-venv)" >&2; exit 1; }
  "$venv/bin/pip" install -q --disable-pip-version-check \
    "openapi-spec-validator==$validator_version" "schemathesis==$schemathesis_version" \
    || { echo "api-test: cannot install the tools from PyPI" >&2; exit 1; }
fi

cd "$here"
echo "api-test: openapi-spec-validator Public/openapi.json" >&2
"$venv/bin/python" -m openapi_spec_validator Public/openapi.json

work=$(mktemp -d)
pid=""
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  [[ -n ${API_TEST_KEEP:-} ]] && cat "$work/stdout" "$work/stderr" >"$API_TEST_KEEP"
  rm -rf "$work"
}
trap cleanup EXIT

closed_port=http://127.0.0.1:9
"$venv/bin/python" - config.json "$work/config.json" "$closed_port" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
local = sys.argv[3]
config["server"]["rateLimitPerSecond"] = 0
# Schemathesis names a client per test case in X-Forwarded-For (Tests/API/hooks.py), so its deliberate wrong
# tokens do not start the failed-auth throttle for the whole run.
config["server"]["trustedProxies"] = ["127.0.0.1"]
config["apps"][0]["teamId"] = "ABCDE12345"
config["apps"][0]["universalLinkPaths"] = ["/open/*"]
config["apple"].update({"productionURL": local, "sandboxURL": local, "issuerId": "", "keyId": "", "privateKeyFile": ""})
# Stripe, so its webhook route is there to test; the checkout form (not in the API) is the only caller of its API.
config["payments"] = {"provider": "stripe", "defaultTaxCountry": "DEU",
                      "stripe": {"secretKey": "sk_test_api_tier", "webhookSecret": "whsec_api_tier", "apiBase": local}}
json.dump(config, open(sys.argv[2], "w"))
PY
LINKOUT_API_TOKEN=$(openssl rand -hex 24)
LINKOUT_ADMIN_TOKEN=$(openssl rand -hex 24)
export LINKOUT_API_TOKEN LINKOUT_ADMIN_TOKEN
"$binary" serve --config "$work/config.json" --host 127.0.0.1 --port 0 --data-dir "$work/data" \
  >"$work/stdout" 2>"$work/stderr" &
pid=$!
for _ in $(seq 1 100); do
  grep -q "listening on" "$work/stdout" 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/stderr" >&2; echo "api-test: server exited early" >&2; exit 1; }
  sleep 0.1
done
url=$(sed -nE 's/^linkout listening on (http:[^ ]+)$/\1/p' "$work/stdout")
[[ -n $url ]] || { echo "api-test: server did not report its address" >&2; exit 1; }

# Apple's documented example token, recorded so the document's examples (this id, a line item for it) reach the
# success answers and their bodies are checked too, not only the errors of ids that do not exist.
example_token=ewoJImFwcEFwcGxlSWQiOjEyMzQ1Njc4OTAsCgkiYnVuZGxlSWQiOiJjb20uZXhhbXBsZSIsCgkidG9rZW5DcmVhdGlvbkRhdGUiOjE3MDYxNjk2MDAwMDAsCgkiZXh0ZXJuYWxQdXJjaGFzZUlkIjoiMDAwMDAwMDAtMDAwMC0wMDAwLTAwMDAtMDAwMDAwMDAwMDAwIgp9
seeded=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$url/v1/tokens" -H 'Content-Type: application/json' \
  -d "{\"token\": \"$example_token\"}")
[[ $seeded == 201 ]] || { echo "api-test: recording the example token answered $seeded, not 201" >&2; exit 1; }

status=0
"$venv/bin/schemathesis" --config-file Tests/API/schemathesis.toml run "$url/openapi.json" \
  --checks all --max-examples "$max_examples" --workers 1 --seed 1 "$@" || status=$?
if grep -q '"level":"error"\|"level":"critical"' "$work/stdout" "$work/stderr"; then
  echo "api-test: the server logged errors:" >&2
  grep -h '"level":"error"\|"level":"critical"' "$work/stdout" "$work/stderr" | head -20 >&2
  status=1
fi
echo "api-test: $((SECONDS - started)) s in total"
exit "$status"
