#!/bin/sh
# The money views at millions of line items, on SQLite and on a throwaway PostgreSQL: fills the money tables in
# bulk (large transactions), then times the revenue reads (30 days by day, 365 days by month), a month's totals
# and acceptance (the monthly close), the export of a month, and storing one line item at that size.
# usage: bench/money.sh [LINE_ITEMS]   (default 1000000)
# Prints one "BENCH money ENGINE N: what: ms" line per figure. Debug build, as the tests are built.
set -eu
cd "$(dirname "$0")/.."
items=${1:-1000000}
swift build --build-tests -Xswiftc -warnings-as-errors >/dev/null
LINKOUT_BENCH_LINE_ITEMS=$items swift test --skip-build --filter 'MoneyBenchmark' 2>&1 | grep -E '^BENCH|✘' || true
dir=$(mktemp -d)
trap 'scripts/postgres-throwaway.sh stop "$dir"' EXIT
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
scripts/postgres-throwaway.sh start "$dir" "$port"
LINKOUT_TEST_POSTGRES_URL="postgresql://postgres@127.0.0.1:$port/postgres" LINKOUT_BENCH_LINE_ITEMS=$items \
    swift test --skip-build --filter 'MoneyBenchmark' 2>&1 | grep -E '^BENCH|✘' || true
