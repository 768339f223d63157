#!/usr/bin/env bash
# Fuzzes the parsers that read untrusted bytes (HTTP requests, chunked bodies, forms, tokens) with libFuzzer.
#   scripts/fuzz.sh [SECONDS]      (default 60; findings go to .build-fuzz/artifacts/)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
swift build -c release --scratch-path .build-fuzz --product LinkOutFuzz \
  --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address 2>&1 | grep -v "Cannot export local symbol" | tail -n 3
corpus=.build-fuzz/corpus
mkdir -p "$corpus" .build-fuzz/artifacts
printf 'GET /?externalPurchaseToken=eyJhIjoxfQ&bundleId=com.example HTTP/1.1\r\nHost: h\r\n\r\n' >"$corpus/get"
printf 'POST /v1/tokens HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\nT: v\r\n\r\n' >"$corpus/chunked"
printf 'POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\nabc' >"$corpus/length"
printf 'eyJhcHBBcHBsZUlkIjoxMjM0NTY3ODkwLCJidW5kbGVJZCI6ImNvbS5leGFtcGxlIiwidG9rZW5DcmVhdGlvbkRhdGUiOjE3MDYxNjk2MDAwMDAsImV4dGVybmFsUHVyY2hhc2VJZCI6IlNBTkRCT1hfMDAwMDAwMDAtMDAwMC0wMDAwLTAwMDAtMDAwMDAwMDAwMDAwIn0=' >"$corpus/token"
SWIFT_BACKTRACE=enable=no .build-fuzz/release/LinkOutFuzz "$corpus" -max_total_time="$seconds" \
  -artifact_prefix=.build-fuzz/artifacts/ -max_len=4096 -print_final_stats=1 2>&1 | tail -n 12
