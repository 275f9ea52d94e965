#!/usr/bin/env bash
# bench.sh — Go benchmarks of the pure engine and (with a broker) of the broker layer.
set -euo pipefail
cd "$(dirname "$0")/.."
go test -run '^$' -bench . -benchmem ./retry/ ./ui/... 2>/dev/null || go test -run '^$' -bench . -benchmem ./retry/
