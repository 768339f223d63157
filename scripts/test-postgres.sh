#!/usr/bin/env bash
# The PostgreSQL pass of `make test`: starts a throwaway PostgreSQL server (Debian's packages, on a free port
# on 127.0.0.1), runs the storage, landing, reporting, payment and notification tests against it (each test in a
# schema of its own) and the two-instance test, then stops the server and deletes it, whatever happened.
# A server that cannot start fails the pass with its log; nothing is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d /tmp/linkout-postgres.XXXXXX)
trap 'scripts/postgres-throwaway.sh stop "$dir"' EXIT
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
scripts/postgres-throwaway.sh start "$dir" "$port"
echo "test-postgres: PostgreSQL on 127.0.0.1:$port"
# Suites that are SQLite's by nature stay out: the command-line tests read the data folder from another process,
# the full-disk landing test fills the visit journal's filesystem (PostgreSQL has no journal), and the free-page
# tests read the SQLite file's pages.
LINKOUT_TEST_POSTGRES_URL="postgresql://postgres@127.0.0.1:$port/postgres" \
  swift test --skip-build "$@" \
  --filter 'StorageTests.(Ledger|LedgerDashboard|SharedLedger|UnknownStoredValue|MoneyLedger|MigrationUpgrade|PurchaseGuard|RefundTotalGuard)Tests|LinkOutTests' \
  --skip 'CommandLineTests|DiskFullLandingTests|BackupRestoreTests|PrivacyFreePagesTests'
