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

# The landing flow, with Apple's documented example token (V1) and sandbox example (V3).
v1='ewoJImFwcEFwcGxlSWQiOjEyMzQ1Njc4OTAsCgkiYnVuZGxlSWQiOiJjb20uZXhhbXBsZSIsCgkidG9rZW5DcmVhdGlvbkRhdGUiOjE3MDYxNjk2MDAwMDAsCgkiZXh0ZXJuYWxQdXJjaGFzZUlkIjoiMDAwMDAwMDAtMDAwMC0wMDAwLTAwMDAtMDAwMDAwMDAwMDAwIgp9'
v3='eyJhcHBBcHBsZUlkIjoxMjM0NTY3ODkwLCJidW5kbGVJZCI6ImNvbS5leGFtcGxlIiwidG9rZW5DcmVhdGlvbkRhdGUiOjE3MDYxNjk2MDAwMDAsImV4dGVybmFsUHVyY2hhc2VJZCI6IlNBTkRCT1hfMDAwMDAwMDAtMDAwMC0wMDAwLTAwMDAtMDAwMDAwMDAwMDAwIiwidG9rZW5UeXBlIjoiU0VSVklDRVMiLCJ0b2tlbkV4cGlyYXRpb25EYXRlIjoxNzA2MTczMjAwMDAwfQo='
landing="$base/?externalPurchaseToken=$v1&bundleId=com.example"
check "landing with Apple's example token is 303" 303 "$landing"
check "landing HEAD is 303" 303 -I "$landing"
check "landing with a damaged token is 400" 400 "$base/?externalPurchaseToken=abc!&bundleId=com.example"
check "landing with another app's bundle ID is 400" 400 "$base/?externalPurchaseToken=$v1&bundleId=com.other"
jar=$(mktemp)
page=$(curl -s -L -c "$jar" -b "$jar" --max-time 10 "$landing")
rm -f "$jar"
if grep -q 'name="csrf"' <<<"$page" && ! grep -q "$v1" <<<"$page"; then
  echo "ok   landing redirect leads to the checkout page, without the token"
else
  echo "FAIL landing redirect did not lead to a checkout page"
  failures=$((failures + 1))
fi
check "unknown checkout is 404" 404 "$base/checkout/aaaaaaaaaaaaaaaaaaaaaaaaaa"
status=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' -d "{\"token\":\"$v3\"}" "$base/v1/tokens")
if [[ $status == 201 || $status == 200 ]]; then
  echo "ok   app-forwarded token accepted ($status)"
else
  echo "FAIL app-forwarded token: expected 201 or 200, got $status"
  failures=$((failures + 1))
fi
check "app-forwarded damaged token is 400" 400 -H 'Content-Type: application/json' -d '{"token":"!!"}' "$base/v1/tokens"
check "app-forwarded token as text is 415" 415 -H 'Content-Type: text/plain' -d 'x' "$base/v1/tokens"
check "metrics" 200 "$base/metrics"

if ((failures)); then
  echo "smoke: $failures check(s) failed"
  exit 1
fi
echo "smoke: all checks passed"
