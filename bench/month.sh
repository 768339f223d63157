#!/usr/bin/env bash
# A month of reporting against a fake Apple that rejects a share of reports with realistic error bodies.
# usage: bench/month.sh [TOKENS] [REJECT_PERCENT] [SEED]
#   defaults: 3000 tokens over 30 days, 5% of first sendings rejected, seed 19.
# Prints "SIM ..." lines: reports sent, rejections by kind, and how every token ends (accepted, needs attention
# with the action that resolves it, waiting, silently stuck: must be 0), then again after the operator's actions.
set -euo pipefail
cd "$(dirname "$0")/.."
tokens=${1:-3000}
percent=${2:-5}
seed=${3:-19}
# The flags of `make test`, so an existing build is reused rather than redone.
swift build --build-tests -Xswiftc -warnings-as-errors >/dev/null
LINKOUT_SIM_TOKENS=$tokens LINKOUT_SIM_REJECT_PERCENT=$percent LINKOUT_SIM_SEED=$seed \
    swift test -Xswiftc -warnings-as-errors --skip-build --filter 'ReportingMonthSimulation' 2>&1 |
  grep -E '^SIM|✘|passed|failed'
