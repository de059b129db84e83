#!/usr/bin/env bash
# Runs every test of the workspace (unit, integration, benches in test mode, doc tests) and ends
# with one line of totals over all test binaries: "total: N passed, N failed, N skipped", where
# skipped counts the tests that said so (e.g. GPU tests on a machine without a GPU).
set -uo pipefail
cd "$(dirname "$0")/.."

log=$(mktemp)
trap 'rm -f "$log"' EXIT

{ cargo test --workspace --all-targets && cargo test --workspace --doc; } 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

awk '
  /^test result:/ {
    for (i = 1; i <= NF; i++) {
      if ($(i + 1) ~ /^passed/) passed += $i
      if ($(i + 1) ~ /^failed/) failed += $i
    }
  }
  /: skipped: / { skipped++ }
  END { printf "total: %d passed, %d failed, %d skipped\n", passed, failed, skipped }
' "$log"
exit "$status"
