#!/usr/bin/env bash
# Checks a running linkout with curl only: scripts/smoke.sh http://127.0.0.1:8080
set -euo pipefail
base=${1:?usage: smoke.sh BASE_URL}
base=${base%/}
failures=0

check() {  # check NAME EXPECTED_STATUS CURL_ARGS...
  local name=$1 expected=$2
  shift 2
  local status
  status=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$@") || status="curl-error"
  if [[ $status == "$expected" ]]; then
    echo "ok   $name ($status)"
  else
    echo "FAIL $name: expected $expected, got $status"
    failures=$((failures + 1))
  fi
}

check "healthz" 200 "$base/healthz"
check "healthz HEAD" 200 -I "$base/healthz"
check "healthz POST is 405" 405 -X POST "$base/healthz"
check "unknown path is 404" 404 "$base/no-such-page"
check "static file" 200 "$base/static/css/linkout.css"
etag=$(curl -s -D - -o /dev/null "$base/static/css/linkout.css" | tr -d '\r' | sed -n 's/^[Ee][Tt][Aa][Gg]: //p')
check "static revalidation is 304" 304 -H "If-None-Match: $etag" "$base/static/css/linkout.css"
check "static dot-dot is 404" 404 --path-as-is "$base/static/../Package.swift"
check "static encoded dot-dot is 404" 404 --path-as-is "$base/static/%2e%2e/Package.swift"
check "static encoded slash is 404" 404 --path-as-is "$base/static/css%2f..%2f..%2fPackage.swift"
check "static missing is 404" 404 "$base/static/nothing.css"
check "malformed request is 400" 400 -H "Content-Length: 1" -H "Transfer-Encoding: chunked" -d x "$base/healthz"

if ((failures)); then
  echo "smoke: $failures check(s) failed"
  exit 1
fi
echo "smoke: all checks passed"
