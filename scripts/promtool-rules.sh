#!/usr/bin/env bash
# promtool-rules.sh — the shipped alert rules, checked and unit-tested by
# Prometheus' own promtool (Debian's prometheus package; scripts/clients.sh
# installs it). Without promtool it skips with the reason, unless
# LADDER_REQUIRE_BROKER=1 (make test), where a skip would hide a failure.
set -euo pipefail
cd "$(dirname "$0")/../examples/alerts"
if ! command -v promtool >/dev/null; then
  if [ "${LADDER_REQUIRE_BROKER:-}" = 1 ]; then
    echo "promtool-rules.sh: promtool not on PATH (scripts/clients.sh installs Debian's prometheus)" >&2
    exit 1
  fi
  echo "promtool-rules.sh: skipped: promtool not on PATH (apt-get install prometheus)" >&2
  exit 0
fi
promtool check rules ladder.rules.yml
promtool test rules ladder.rules.test.yml
