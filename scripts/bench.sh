#!/usr/bin/env bash
# bench.sh — ladder's benchmarks in one run, against the broker's own tools:
#   - the retry engine (x-death decoding, ladder discovery on 2,000 queues),
#   - the UI's frame rendering (10,000-row browser, 50-ladder home),
#   - broker: a 2,000-queue snapshot; peek against the management API's
#     "Get messages"; and ladder's move against a dynamic
#     shovel (what the management UI's "Move messages" runs) moving the same
#     20,000 persistent 1 KiB messages on the same broker, interleaved.
# Needs a broker (make bench starts one). BENCHCOUNT sets the repetitions.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${BENCHCOUNT:-3}
echo "== retry engine"
go test -run '^$' -bench . -benchmem -count "$count" ./retry/
echo "== terminal UI frames"
go test -run '^$' -bench . -benchmem -count "$count" ./ui/...
echo "== broker: snapshot of 2,000 queues"
go test -run '^$' -bench 'Snapshot2000' -benchtime 5x -count 1 ./broker/
echo "== broker: peek 1,000 x 1 KiB vs the management API's Get messages (requeue)"
go test -run '^$' -bench 'Peek1000|ManagementGet1000' -benchtime 5x -count "$count" ./broker/
echo "== broker: ladder move vs dynamic shovel (20,000 persistent 1 KiB messages, msg/s)"
for i in $(seq "$count"); do
  go test -run '^$' -bench 'Move20k|Shovel20k' -benchtime 1x -count 1 ./broker/ | grep -E '^Benchmark'
done
