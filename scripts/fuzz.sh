#!/usr/bin/env bash
# Fuzzes every parser of outside bytes with libFuzzer and AddressSanitizer, one target each (listed in
# Package.swift as `fuzz-<name>`), starting from the seeds in Tests/Fuzz/seeds/<name>/.
#   scripts/fuzz.sh [SECONDS] [TARGET...]   (default 60 s per target, every target, one after another)
# Prints a line per target (executions, exec/s, findings) and exits non-zero when a target finds a crash, a leak,
# a timeout or an out-of-memory, or does not build. Findings go to .build-fuzz/artifacts/<name>/; reproduce one
# with `SWIFT_BACKTRACE=enable=no .build-fuzz/release/fuzz-<name> FILE`.
# FUZZ_CONFIGURATION=debug builds the targets unoptimized: several times quicker to compile and about ten times
# slower to run, which suits the few seconds per target `make test` gives them.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "usage: scripts/fuzz.sh [SECONDS] [TARGET...]" >&2; exit 2; }
shift $(($# > 0 ? 1 : 0))
all=$(sed -n 's/^    ("\([a-z0-9-]*\)", "LinkOutFuzz.*/\1/p' Package.swift)
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || read -r -d '' -a targets <<<"$all" || true
for target in "${targets[@]}"; do
  grep -qx -- "$target" <<<"$all" || { echo "unknown fuzz target $target (known: $(echo $all))" >&2; exit 2; }
done

# One build of every fuzz product. -sanitize=fuzzer,address must come last: SwiftPM's two separate -sanitize
# flags reach swiftc in either order and only the last counts, which silently drops coverage or ASan.
log=.build-fuzz/build.log
mkdir -p .build-fuzz
configuration=${FUZZ_CONFIGURATION:-release}
[[ $configuration == release || $configuration == debug ]] || { echo "FUZZ_CONFIGURATION is release or debug" >&2; exit 2; }
if ! LINKOUT_FUZZ=1 swift build -c "$configuration" --scratch-path .build-fuzz --sanitize=fuzzer \
  -Xswiftc -sanitize=fuzzer,address >"$log" 2>&1; then
  grep -v "Cannot export local symbol" "$log" | tail -n 30
  echo "fuzz targets did not build (whole log: $log)" >&2
  exit 1
fi

failed=0
printf '%-22s %12s %9s %8s  %s\n' target executions exec/s "RSS MB" findings
for target in "${targets[@]}"; do
  corpus=.build-fuzz/corpus/$target
  artifacts=.build-fuzz/artifacts/$target/
  mkdir -p "$corpus" "$artifacts"
  case $target in
    notification-jws | notification-history) max_len=16384 ;;
    config) max_len=8192 ;;
    *) max_len=4096 ;;
  esac
  options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$max_len"
    -artifact_prefix="$artifacts" -print_final_stats=1)
  dictionary=Tests/Fuzz/dictionaries/$target.dict
  [[ -f $dictionary ]] && options+=(-dict="$dictionary")
  run_log=.build-fuzz/$target.log
  status=0
  # New inputs go to the first folder (the working corpus); the seeds in the repository are only read.
  SWIFT_BACKTRACE=enable=no timeout $((seconds + 120)) .build-fuzz/"$configuration"/fuzz-"$target" "$corpus" \
    "Tests/Fuzz/seeds/$target" "${options[@]}" >"$run_log" 2>&1 || status=$?
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$run_log")
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$run_log")
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$run_log")
  if [[ $status -eq 0 ]]; then
    findings=none
  else
    failed=1
    findings="$(grep -m1 -E '^(==[0-9]+==)?ERROR|^SUMMARY|libFuzzer: ' "$run_log" || echo "exit status $status")"
  fi
  printf '%-22s %12s %9s %8s  %s\n' "$target" "${executions:-?}" "${speed:-?}" "${rss:-?}" "$findings"
  if [[ $status -ne 0 ]]; then
    grep -E 'Test unit written to|Fatal error|SUMMARY' "$run_log" | sed 's/^/    /' || true
    echo "    whole log: $run_log"
  fi
done
exit "$failed"
