#!/usr/bin/env bash
# fuzz.sh [SECONDS] [TARGET...] — run cargo-fuzz targets for a bounded time each.
#
# Installs cargo-fuzz when missing (needs the nightly toolchain, which rustup
# provides here). Corpora live in fuzz/corpus/<target>/ (seeded from the
# shared vectors by scripts/fuzz-corpus.py and checked in); crashes land in
# fuzz/artifacts/<target>/ and must become regression vectors.
# Prints executions per target; FUZZ_LOG (default target/fuzz-report.txt)
# collects the summary lines for BENCHMARKS.md.
set -euo pipefail
SECONDS_PER_TARGET="${1:-20}"
shift || true
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT/fuzz"
TOOLCHAIN="${FUZZ_TOOLCHAIN:-nightly}"
if ! cargo "+$TOOLCHAIN" fuzz --version >/dev/null 2>&1; then
  echo "[fuzz] installing cargo-fuzz"
  cargo install cargo-fuzz --locked 2>/dev/null || cargo install cargo-fuzz
fi
TARGETS=("$@")
if [ "${#TARGETS[@]}" -eq 0 ]; then
  mapfile -t TARGETS < <(cargo "+$TOOLCHAIN" fuzz list)
fi
LOG="${FUZZ_LOG:-$ROOT/target/fuzz-report.txt}"
mkdir -p "$(dirname "$LOG")"
: > "$LOG"
for t in "${TARGETS[@]}"; do
  mkdir -p "corpus/$t"
  echo "[fuzz] $t for ${SECONDS_PER_TARGET}s"
  out="$(cargo "+$TOOLCHAIN" fuzz run "$t" "corpus/$t" -- -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -print_final_stats=1 2>&1)" || {
    echo "$out" | tail -40
    echo "[fuzz] $t FOUND A CRASH (see fuzz/artifacts/$t)"
    exit 1
  }
  execs="$(echo "$out" | grep -oE 'stat::number_of_executed_units: *[0-9]+' | grep -oE '[0-9]+$' || echo '?')"
  echo "$t executions=$execs seconds=$SECONDS_PER_TARGET crashes=0" | tee -a "$LOG"
done
