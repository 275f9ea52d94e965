#!/usr/bin/env bash
# bench.sh — ladder's benchmarks in one run, against the broker's own tools,
# on RabbitMQ 3.10 and 4.3 (BENCH_VERSIONS), written to BENCH.md:
#   - move of 20,000 and 100,000 persistent 1 KiB messages: ladder vs a dynamic shovel
#     (what the management UI's "Move messages" creates) vs a one-at-a-time
#     get → publish → confirm → ack script, interleaved on the same broker;
#   - peek of 1,000 messages vs the management API's "Get messages";
#   - a 2,000-queue snapshot;
#   - the Go benchmarks of the engine and the UI's frames (once).
# Needs the brokers (make bench starts them). BENCHCOUNT sets repetitions.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${BENCHCOUNT:-3}
versions=${BENCH_VERSIONS:-"3.10 4.3"}
out=${BENCH_OUT:-BENCH.md}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The hand-written analysis at the end of the file is kept.
notes="$work/notes.md"
if [ -f "$out" ]; then sed -n '/^## Where the time goes in a move/,$p' "$out" >"$notes"; else : >"$notes"; fi

ports() {
  case "$1" in
    3.10) echo 5672 15672 ;;
    4.3) echo 5673 15673 ;;
    4.0) echo 5674 15674 ;;
  esac
}

# metric FILE BENCH UNIT: the values of one metric, space-separated.
metric() { awk -v b="^$2-[0-9]+$" -v u="$3" '$1 ~ b { for (i = 2; i < NF; i++) if ($(i+1) == u) printf "%s ", $i }' "$1"; }
# median of the numbers given
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2] + a[NR/2+1]) / 2 }'; }
# brokerpid PORT: the process listening on PORT (the broker's CPU per moved
# message is read from /proc/PID/stat), empty when ss cannot tell.
brokerpid() { ss -ltnpH "sport = :$1" 2>/dev/null | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1 || true; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f×", a / b }'; }

{
  echo "# ladder benchmarks"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "- machine: $(nproc) cores, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo '?'), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null)"
  echo "- command: BENCHCOUNT=$count scripts/bench.sh (make bench); medians of $count runs"
  echo "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo
} >"$out"

for v in $versions; do
  read -r amqp api < <(ports "$v")
  export LADDER_TEST_AMQP_URL="amqp://guest:guest@127.0.0.1:$amqp/" LADDER_TEST_API_URL="http://127.0.0.1:$api"
  LADDER_BENCH_BROKER_PID=$(brokerpid "$amqp")
  export LADDER_BENCH_BROKER_PID
  ver=$(curl -fsS -u guest:guest "$LADDER_TEST_API_URL/api/overview" | sed -n 's/.*"rabbitmq_version":"\([^"]*\)".*/\1/p')
  log="$work/broker-$v.txt"
  echo "== RabbitMQ $ver: move (ladder, shovel, one at a time), peek, snapshot" >&2
  for _ in $(seq "$count"); do
    go test -run '^$' -bench 'Move20k|Move100k|Shovel20k|Shovel100k|OneByOne20k' -benchtime 1x -count 1 ./broker/ | grep -E '^Benchmark' | tee -a "$log" >&2
  done
  go test -run '^$' -bench 'Peek1000|ManagementGet1000' -benchtime 5x -count "$count" ./broker/ | grep -E '^Benchmark' | tee -a "$log" >&2
  go test -run '^$' -bench 'Snapshot2000' -benchtime 5x -count 1 ./broker/ | grep -E '^Benchmark' | tee -a "$log" >&2
  mv=$(metric "$log" BenchmarkMove20k msg/s | median)
  sh=$(metric "$log" BenchmarkShovel20k msg/s | median)
  one=$(metric "$log" BenchmarkOneByOne20k msg/s | median)
  mv100=$(metric "$log" BenchmarkMove100k msg/s | median)
  sh100=$(metric "$log" BenchmarkShovel100k msg/s | median)
  # cpu BENCH: "broker + client µs" per moved message (medians); the
  # client of a shovel is the benchmark polling the target's depth.
  cpu() {
    awk -v b="$(metric "$log" "$1" broker-µs/msg | median)" -v c="$(metric "$log" "$1" self-µs/msg | median)" \
      'BEGIN { if (b == "-" || c == "-") print "-"; else printf "%.0f + %.0f µs", b, c }'
  }
  pk=$(metric "$log" BenchmarkPeek1000 ns/op | median)
  get=$(metric "$log" BenchmarkManagementGet1000 ns/op | median)
  snap=$(metric "$log" BenchmarkSnapshot2000 ns/op | median)
  ms() { awk -v n="$1" 'BEGIN { if (n == "-") print "-"; else printf "%.1f ms", n / 1e6 }'; }
  {
    echo "## RabbitMQ $ver"
    echo
    echo "| what | ladder | peer | ladder ÷ peer |"
    echo "|---|---|---|---|"
    echo "| move 20,000 × 1 KiB persistent | $mv msg/s | shovel $sh msg/s | $(ratio "$mv" "$sh") |"
    echo "| move 20,000 × 1 KiB persistent | $mv msg/s | one at a time $one msg/s | $(ratio "$mv" "$one") |"
    echo "| move 100,000 × 1 KiB persistent | $mv100 msg/s | shovel $sh100 msg/s | $(ratio "$mv100" "$sh100") |"
    echo "| CPU per message moved (20,000): broker + client | $(cpu BenchmarkMove20k) | shovel $(cpu BenchmarkShovel20k) | |"
    echo "| peek 1,000 × 1 KiB | $(ms "$pk") | management get $(ms "$get") | $(ratio "$get" "$pk") faster |"
    echo "| snapshot of 2,000 queues (+ discovery, findings) | $(ms "$snap") | | |"
    echo
    echo '```'
    cat "$log"
    echo '```'
    echo
  } >>"$out"
done

echo "== Go benchmarks: engine and UI frames" >&2
go test -run '^$' -bench . -benchmem -count "$count" ./retry/ ./ui/... | grep -E '^Benchmark' | tee "$work/go.txt" >&2
{
  echo "## Go benchmarks (medians)"
  echo
  echo "| benchmark | ns/op | target |"
  echo "|---|---|---|"
  for b in DecodeXDeath3:"≤ 1 µs" Discover2000:"≤ 20 ms" Findings2000:"" HomeView50/80x24:"≤ 2 ms" HomeView50/160x48:"≤ 2 ms" \
    BrowserView10k/80x24:"≤ 2 ms" BrowserView10k/160x48:"≤ 2 ms" BrowserLoad10k:""; do
    name=${b%%:*} target=${b#*:}
    echo "| $name | $(metric "$work/go.txt" "Benchmark$name" ns/op | median) | $target |"
  done
  echo
} >>"$out"
cat "$notes" >>"$out"
echo "bench.sh: wrote $out" >&2
