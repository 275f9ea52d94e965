#!/usr/bin/env bash
# test.sh — the whole suite against the real broker, leaving it as found:
# sweep what interrupted runs left (ladder-test.* names), record the broker's
# vhosts, queues, exchanges and policies, optionally fill it with unrelated
# ladders and queues (LADDER_TEST_NOISE=1, as CI does), run the tests, remove
# the noise, and fail if anything was left behind or went missing.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
PKGS=${PKGS:-./...}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$GO" build -o "$work/brokerstate" ./scripts/brokerstate
bs() { "$work/brokerstate" "$@"; }

bs sweep
bs save "$work/before"
noise=${LADDER_TEST_NOISE:-0}
if [ "$noise" = 1 ]; then bs noise up; fi

rc=0
LADDER_REQUIRE_BROKER=1 "$GO" test -race -count=1 $PKGS || rc=$?

if [ "$noise" = 1 ]; then bs noise down || rc=1; fi
bs check "$work/before" || rc=1
exit $rc
