#!/bin/sh
# Drain time of the report outbox against a fake Apple answering in 50 ms, without and with hanging calls.
# usage: bench/reporting.sh [REPORTS] [HANG_PERCENT] [TIMEOUT_SECONDS] [CONCURRENCY]
#   defaults: 5000 reports; runs 0% and then HANG_PERCENT (default 10) hanging calls; timeout 15 s; 16 senders.
# Prints one "BENCH ..." line per run (reports per second, seconds to drain).
set -eu
cd "$(dirname "$0")/.."
reports=${1:-5000}
hang=${2:-10}
timeout=${3:-15}
concurrency=${4:-16}
swift build --build-tests >/dev/null
for percent in 0 "$hang"; do
    LINKOUT_BENCH_REPORTS=$reports LINKOUT_BENCH_HANG_PERCENT=$percent LINKOUT_BENCH_TIMEOUT=$timeout \
        LINKOUT_BENCH_CONCURRENCY=$concurrency \
        swift test --skip-build --filter 'ReportingBenchmark' 2>&1 | grep -E '^BENCH|✘' || true
done
