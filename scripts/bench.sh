#!/usr/bin/env bash
# bench.sh — ladder's benchmarks in one run, against the broker's own tools,
# on RabbitMQ 3.10 and 4.3 (BENCH_VERSIONS), written to BENCH.md:
#   - move of 20,000 and 100,000 persistent 1 KiB messages: ladder vs a
#     dynamic shovel (what the management UI's "Move messages" creates) vs a
#     one-at-a-time get → publish → confirm → ack script, on the same broker;
#   - redrive to origin: a DLQ of 20,000 messages dead-lettered from 10 main
#     queues, sent back to each one's origin: ladder vs a one-at-a-time script
#     reading x-death;
#   - peek of 1,000 messages (in process) and of 10,000 (the ladder binary:
#     time and peak RSS) vs the management API's "Get messages" (curl);
#     the TUI browsing 10,000 messages in tmux (peak RSS);
#   - a 2,000-queue snapshot in process; `ladder topology` of those 2,000
#     queues as a process vs curl GET /api/queues/{vhost}; the TUI refreshing
#     every 2 s for 60 s vs curl polling GET /api/queues/{vhost} as often,
#     by the broker's CPU time;
#   - `ladder topology --all-vhosts` of 50 vhosts holding 2,000 queues (time
#     and its HTTP requests, counted through benchfix's proxy) vs curl GET
#     /api/queues/{vhost} of each vhost in turn and one GET /api/queues;
#   - `ladder serve --ssh` on that 2,000-queue vhost with 1 and with 20 SSH
#     sessions (benchfix ssh-sessions) for 60 s, refresh every 2 s: the
#     server's peak RSS and the broker's CPU time;
#   - the Go benchmarks of the engine and the UI's frames (once).
# Needs the brokers (make bench starts them), curl, jq, tmux and GNU time
# (each installed with apt-get when missing and run as root; without GNU
# time the peak RSS of `ladder peek` is polled from /proc).
# BENCHCOUNT (default 3) repeats the light rows; the heavy ones (100,000
# messages, the 60 s refresh, the SSH sessions) run once per version whatever
# it says.
# BENCH_QUICK=1 skips the heavy rows (a quick check of the script);
# BENCH_WINDOW (seconds, default 60) is the refresh rows' window.
# BENCH_ONLY="NAME…" (spaces or commas) runs only those rows: move, move100k,
# redrive, peek1k (with the in-process snapshot), peek10k (with the TUI
# browse), topology, refresh, ssh, allvhosts, go; the tables then go to stdout
# (BENCH.md keeps its other rows) unless BENCH_OUT names a file.
# Everything it creates is deleted when it ends, even on failure or Ctrl+C
# (then with what killed Go benchmarks left: ladder-test.Benchmark… names).
set -euo pipefail
cd "$(dirname "$0")/.."
count=${BENCHCOUNT:-3}
versions=${BENCH_VERSIONS:-"3.10 4.3"}
# Written in $work, put in place at the end: a failed run leaves it as it was.
out=${BENCH_OUT:-BENCH.md}
quick=${BENCH_QUICK:-0}
only=$(echo "${BENCH_ONLY:-}" | tr ',' ' ' | xargs)
for o in $only; do
  case "$o" in
    move | move100k | redrive | peek1k | peek10k | topology | refresh | ssh | allvhosts | go) ;;
    *) echo "bench.sh: BENCH_ONLY: no rows named $o" >&2; exit 2 ;;
  esac
done
[ -z "$only" ] || out=${BENCH_OUT:--}
# only NAME: whether NAME's rows are to be taken.
only() { [ -z "$only" ] || [[ " $only " == *" $1 "* ]]; }
# row NAME LINE: LINE when NAME's rows were taken.
row() { if only "$1"; then echo "$2"; fi; }
# The refresh rows: the TUI's --refresh, and how long each side is measured.
refresh=2
window=${BENCH_WINDOW:-60}
work=$(mktemp -d)
md="$work/BENCH.md"
# The hand-written analysis at the end of BENCH.md is kept.
notes="$work/notes.md"
if [ "$out" != - ] && [ -f "$out" ]; then sed -n '/^## Where the time goes in a move/,$p' "$out" >"$notes"; else : >"$notes"; fi
# Every vhost this run creates starts with this; the sweep deletes them.
prefix="ladder-bench.$$."
tmuxes=()
proxypid=
servepid=
sshpid=

cleanup() {
  local rc=$?
  set +e
  for s in "${tmuxes[@]}"; do tmux kill-session -t "$s" 2>/dev/null; done
  [ -z "$proxypid" ] || { kill "$proxypid" 2>/dev/null; wait "$proxypid" 2>/dev/null; }
  [ -z "$sshpid" ] || { kill "$sshpid" 2>/dev/null; wait "$sshpid" 2>/dev/null; }
  [ -z "$servepid" ] || { kill "$servepid" 2>/dev/null; wait "$servepid" 2>/dev/null; }
  if [ -x "$work/benchfix" ]; then
    # After a failure or Ctrl+C also what a killed Go benchmark left (its
    # t.Cleanup did not run); not after a finished run: others' benchmarks
    # running on the same broker use the same names.
    local what=()
    [ "$rc" = 0 ] || what=(-benchmarks)
    for v in $versions; do
      read -r amqp api _ < <(ports "$v")
      LADDER_TEST_AMQP_URL="amqp://guest:guest@127.0.0.1:$amqp/" LADDER_TEST_API_URL="http://127.0.0.1:$api" "$work/benchfix" sweep "${what[@]}" "$prefix"
    done
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ports() {
  case "$1" in
    3.10) echo 5672 15672 15692 ;;
    4.3) echo 5673 15673 15693 ;;
    4.0) echo 5674 15674 15694 ;;
  esac
}

# need CMD PACKAGE: install PACKAGE with apt-get when CMD is missing.
need() {
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "== installing $2" >&2
    apt-get install -y "$2" >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 && apt-get install -y "$2" >/dev/null 2>&1; } || true
  fi
  command -v "$1" >/dev/null 2>&1
}
need curl curl || { echo "bench.sh: curl is needed" >&2; exit 1; }
need jq jq || { echo "bench.sh: jq is needed" >&2; exit 1; }
need tmux tmux || { echo "bench.sh: tmux is needed (the TUI rows)" >&2; exit 1; }
gnutime=/usr/bin/time
[ -x "$gnutime" ] || need /usr/bin/time time || gnutime=

CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$work/ladder" .
go build -o "$work/benchfix" ./scripts/benchfix

# metric FILE BENCH UNIT: the values of one metric, space-separated.
metric() { awk -v b="^$2-[0-9]+$" -v u="$3" '$1 ~ b { for (i = 2; i < NF; i++) if ($(i+1) == u) printf "%s ", $i }' "$1"; }
# proc FILE NAME K: the K-th value of the process rows named NAME
# ("proc NAME VALUE UNIT [VALUE UNIT…]").
proc() { awk -v n="$2" -v k="$3" '$1 == "proc" && $2 == n { printf "%s ", $(2 * k + 1) }' "$1"; }
# median of the numbers given
median() { tr ' ' '\n' | { grep -v '^$' || true; } | sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2] + a[NR/2+1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f×", a / b }'; }
ms() { awk -v n="$1" 'BEGIN { if (n == "-") print "-"; else printf "%.1f ms", n / 1e6 }'; }
mib() { awk -v n="$1" 'BEGIN { if (n == "-") print "-"; else printf "%.1f MiB", n / 1024 }'; }
# better RATIO UP DOWN: a peer ÷ ladder ratio in words: "2.31× faster" at
# 2.31, "2.04× slower" at 0.49.
better() { awk -v r="${1%×}" -v u="$2" -v d="$3" 'BEGIN { if (r == "-") print "-"; else if (r + 0 >= 1) printf "%.2f× %s", r, u; else if (r + 0 > 0) printf "%.2f× %s", 1 / r, d; else print "-" }'; }
# atleast RATIO MIN: met or missed (RATIO like 2.31×).
atleast() { awk -v r="${1%×}" -v m="$2" 'BEGIN { if (r == "-") print "-"; else if (r + 0 >= m) print "met"; else print "**missed**" }'; }
atmost() { awk -v r="$1" -v m="$2" 'BEGIN { if (r == "-") print "-"; else if (r + 0 <= m) print "met"; else print "**missed**" }'; }
now() { date +%s%N; }

# timed LOG NAME CMD…: run CMD (stdout to /dev/null), log its wall time in
# ns and its peak RSS in KiB as "proc NAME NS ns KIB KiB".
timed() {
  local log=$1 name=$2 start end rss=-
  shift 2
  start=$(now)
  if [ -n "$gnutime" ]; then
    "$gnutime" -f %M -o "$work/rss" "$@" >/dev/null
    rss=$(tail -1 "$work/rss")
  else
    # No GNU time: poll VmHWM while it runs (may miss the last growth).
    "$@" >/dev/null &
    local p=$! h
    while kill -0 "$p" 2>/dev/null; do
      h=$(awk '/^VmHWM/ { print $2 }' "/proc/$p/status" 2>/dev/null || true)
      [ -z "$h" ] || rss=$h
      sleep 0.02
    done
    wait "$p"
  fi
  end=$(now)
  echo "proc $name $((end - start)) ns $rss KiB" | tee -a "$log" >&2
}

# curled LOG NAME CURL-ARGS…: one curl, logged as "proc NAME NS ns BYTES B".
curled() {
  local log=$1 name=$2 start end size
  shift 2
  start=$(now)
  size=$(curl -fsS -o /dev/null -w '%{size_download}' -u guest:guest "$@")
  end=$(now)
  echo "proc $name $((end - start)) ns $size B" | tee -a "$log" >&2
}

# screen SESSION TEXT [SECONDS]: wait until the tmux pane shows TEXT.
screen() {
  local deadline=$((SECONDS + ${3:-30}))
  until tmux capture-pane -p -t "$1" 2>/dev/null | grep -qF -- "$2"; do
    if [ $SECONDS -ge $deadline ]; then
      echo "bench.sh: the TUI never showed \"$2\":" >&2
      tmux capture-pane -p -t "$1" >&2 || true
      return 1
    fi
    sleep 0.1
  done
}

# tui SESSION VHOST ARGS…: the ladder binary's TUI in a detached 80×24
# tmux pane (exec'd: the pane's pid is ladder's, printed). Add SESSION to
# tmuxes first: this runs in a subshell.
tui() {
  local s=$1 vh=$2
  shift 2
  TERM=xterm-256color tmux new-session -d -s "$s" -x 80 -y 24 \
    "exec env NO_COLOR=1 $work/ladder --amqp-url $LADDER_TEST_AMQP_URL --api-url $LADDER_TEST_API_URL --prometheus-url $LADDER_TEST_PROMETHEUS_URL --vhost $vh --read-only $*"
  tmux display -p -t "$s" '#{pane_pid}'
}

# beam CPU time in clock ticks (utime + stime) of the broker at API port $1.
beampid() { ss -ltnpH "sport = :$1" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1; }
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
# settle: let the broker settle (a deleted queue's messages, the stats of
# new queues): up to 2 min, until it uses under a tenth of a core over 5 s;
# prints yes or no.
settle() {
  local t0
  for _ in $(seq 24); do
    t0=$(ticks "$beam")
    sleep 5
    if [ $(($(ticks "$beam") - t0)) -lt $((hz / 2)) ]; then echo yes; return; fi
  done
  echo no
}

{
  echo "# ladder benchmarks"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "- machine: $(nproc) cores, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo '?'), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null)"
  if [ -n "$only" ]; then
    echo "- command: BENCHCOUNT=$count BENCH_ONLY=\"$only\" scripts/bench.sh: medians of $count runs; only these rows"
  elif [ "$quick" = 1 ]; then
    echo "- command: BENCHCOUNT=$count BENCH_QUICK=1 scripts/bench.sh: medians of $count runs; the heavy rows skipped"
  else
    echo "- command: BENCHCOUNT=$count scripts/bench.sh (make bench); medians of $count runs, rows marked (1 run) once per version"
  fi
  echo "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo
  cat <<'EOF'
How each row is taken (all on the same broker, one after another, which should otherwise
be idle: others' traffic shows in every figure, most in the broker CPU rows):

- **move**: persistent 1 KiB messages from one classic queue to another; ladder's move (in
  process, `broker.Live.Move`: pipelined confirms, mandatory publishes) vs a dynamic shovel
  (`src-delete-after: queue-length`, `ack-mode: on-confirm`, done when the target's exact
  depth — a passive declare — is all of them) vs a script that gets one message, publishes
  it (mandatory), waits for its confirm and acks it. Each ends checking both depths exactly.
  At 100,000 each runs once per version; the one-at-a-time side moves all 100,000 (about a
  minute), not a sample.
- **redrive to origin**: 10 main queues, each bound to a topic exchange and dead-lettering to
  one DLQ; 2,000 messages published to each through the exchange and rejected, so the DLQ
  holds 20,000 with `x-death`. ladder's `move --to origin` (in process) vs a script that gets
  one, reads the queue of its `x-death` entry, publishes it there (default exchange,
  mandatory), waits for the confirm, acks. Checked after: each main holds exactly its 2,000.
- **peek 10,000**: the ladder binary, `ladder peek Q -n 10000 -o json >/dev/null`, wall time
  and peak RSS (GNU time's maximum resident set) vs `curl` POSTing the management API's
  `/api/queues/{vhost}/Q/get` (count 10,000, `ack_requeue_true`), wall time and the size of
  its response (the broker's memory for it is not comparable).
- **TUI browse 10,000**: the binary in an 80×24 tmux pane (`--peek-limit 10000`), the queue
  opened (the pane shows `peeked 10000 of …`), `G` to the last row (`peek-09999` shown),
  `enter` on it (the inspector) and back; then VmHWM of the ladder process.
- **topology**: a vhost of 400 ladders (2,000 queues, their bindings); the binary's
  `ladder topology -o json >/dev/null` (a whole run: connect, read, discover, findings,
  print) vs `curl GET /api/queues/{vhost}`, wall time.
- **TUI refresh**: the TUI on that vhost with `--refresh 2s`, left on its home screen, vs
  `curl GET /api/queues/{vhost}` every 2 s, each for 60 s, measured by the broker's CPU
  time over the window (`utime + stime` of its `beam.smp` from `/proc/PID/stat`); the same
  window with no client is shown as the idle cost, which both sides include. First the
  broker is left to settle (up to 2 min, until it uses under a tenth of a core over 5 s;
  `refresh-settled` in the log says whether it did).
- **topology, all vhosts**: 50 vhosts of 8 ladders each (2,000 queues in all, their
  bindings); the binary's `ladder topology --all-vhosts -o json >/dev/null`, wall time, and
  the HTTP requests it makes, counted in a first (checked, not timed) run through a proxy
  to the management API (`benchfix proxy`, which logs each request it passes on) vs what
  one does without ladder: `curl GET /api/queues/{vhost}` for each of the 50 vhosts in turn
  (a shell loop, one curl each: 50 requests), and one `curl GET /api/queues` (every vhost at
  once), wall time. First the broker is left to settle as for the TUI refresh
  (`allvhosts-settled`). Both ladder and that GET read every vhost the user sees: other
  vhosts on the broker count in both (the log's `allvhosts-listed` says how many queues).
- **serve over SSH**: the binary's `ladder serve --ssh 127.0.0.1:0 --refresh 2s` on the
  topology rows' vhost (broker URLs and vhost from `LADDER_*` variables, `LADDER_NO_COLOR=1`
  as the TUI rows; one generated ed25519 key, `role=read-only`), a new server for each
  count; `benchfix ssh-sessions` opens 1, then 20 sessions at once (an 80×24 pty each,
  output drained) and waits until every screen shows `LADDERS`; then the broker's CPU time
  over 60 s as for the TUI refresh (after the same settle, `ssh-settled`; the idle window
  measured just before), and the server's peak RSS (`VmHWM` of the serve process; the log
  also has its RSS before any session and its own CPU time over the window, in clock
  ticks as the broker's). Each session is its own UI; their screens are read through the
  server's one snapshot reader (a read shared while younger than 0.9 of a refresh), peeks and
  moves on each session's own client: one viewer in a local terminal is the TUI refresh row.
EOF
  echo
} >"$md"

for v in $versions; do
  read -r amqp api prom < <(ports "$v")
  export LADDER_TEST_AMQP_URL="amqp://guest:guest@127.0.0.1:$amqp/" LADDER_TEST_API_URL="http://127.0.0.1:$api" LADDER_TEST_PROMETHEUS_URL="http://127.0.0.1:$prom"
  ver=$(curl -fsS -u guest:guest "$LADDER_TEST_API_URL/api/overview" | sed -n 's/.*"rabbitmq_version":"\([^"]*\)".*/\1/p')
  beam=$(beampid "$api")
  [ -n "$beam" ] && [ -r "/proc/$beam/stat" ] || { echo "bench.sh: no beam.smp listening on port $api" >&2; exit 1; }
  # The move benchmarks read the broker's CPU per moved message from it.
  export LADDER_BENCH_BROKER_PID=$beam
  log="$work/broker-$v.txt"
  : >"$log"
  vbench="$work/ladder --amqp-url $LADDER_TEST_AMQP_URL --api-url $LADDER_TEST_API_URL --prometheus-url $LADDER_TEST_PROMETHEUS_URL"

  if only move; then
    echo "== RabbitMQ $ver: move 20,000 (ladder, shovel, one at a time)" >&2
    for _ in $(seq "$count"); do
      go test -run '^$' -bench '^Benchmark(Move20k|Shovel20k|OneByOne20k)$' -benchtime 1x -count 1 ./broker/rabbit/ | grep -E '^Benchmark' | tee -a "$log" >&2
    done
  fi
  if [ "$quick" != 1 ] && only move100k; then
    echo "== RabbitMQ $ver: move 100,000 (ladder, shovel, one at a time), once" >&2
    go test -run '^$' -bench '^Benchmark(Move100k|Shovel100k|OneByOne100k)$' -benchtime 1x -count 1 -timeout 30m ./broker/rabbit/ | grep -E '^Benchmark' | tee -a "$log" >&2
  fi
  if only redrive; then
    echo "== RabbitMQ $ver: redrive 20,000 to their origins (ladder, one at a time)" >&2
    for _ in $(seq "$count"); do
      go test -run '^$' -bench '^Benchmark(RedriveOrigin20k|RedriveOneByOne20k)$' -benchtime 1x -count 1 -timeout 20m ./broker/rabbit/ | grep -E '^Benchmark' | tee -a "$log" >&2
    done
  fi
  if only peek1k; then
    echo "== RabbitMQ $ver: peek 1,000, snapshot" >&2
    go test -run '^$' -bench '^Benchmark(Peek1000|ManagementGet1000)$' -benchtime 5x -count "$count" ./broker/rabbit/ | grep -E '^Benchmark' | tee -a "$log" >&2
    go test -run '^$' -bench '^BenchmarkSnapshot2000$' -benchtime 5x -count 1 ./broker/rabbit/ | grep -E '^Benchmark' | tee -a "$log" >&2
  fi

  if only peek10k; then
    echo "== RabbitMQ $ver: peek 10,000 (ladder binary, management get), TUI browse" >&2
    pv="${prefix}peek"
    "$work/benchfix" queue "$pv" peek 10000
    getbody='{"count":10000,"ackmode":"ack_requeue_true","encoding":"auto"}'
    geturl="$LADDER_TEST_API_URL/api/queues/$(jq -rn --arg v "$pv" '$v|@uri')/peek/get"
    # A first run of each, checked, not counted.
    n=$($vbench --vhost "$pv" peek peek -n 10000 -o json | jq '.messages | length')
    [ "$n" = 10000 ] || { echo "bench.sh: ladder peek saw $n messages, want 10000" >&2; exit 1; }
    "$work/benchfix" ready "$pv" peek 10000
    n=$(curl -fsS -u guest:guest -H 'content-type: application/json' -d "$getbody" "$geturl" | jq length)
    [ "$n" = 10000 ] || { echo "bench.sh: management get returned $n messages, want 10000" >&2; exit 1; }
    # Each side starts on the whole queue: what a peek or a get took comes
    # back a moment after it answered.
    for _ in $(seq "$count"); do
      "$work/benchfix" ready "$pv" peek 10000
      timed "$log" peek10k-ladder $vbench --vhost "$pv" peek peek -n 10000 -o json
      "$work/benchfix" ready "$pv" peek 10000
      curled "$log" peek10k-get -H 'content-type: application/json' -d "$getbody" "$geturl"
    done
    "$work/benchfix" ready "$pv" peek 10000
    s="ladder-bench-$$-browse"
    tmuxes+=("$s")
    pid=$(tui "$s" "$pv" --peek-limit 10000)
    screen "$s" "OTHER QUEUES (1)"
    tmux send-keys -t "$s" Enter
    screen "$s" "peeked 10000 of" 60
    tmux send-keys -t "$s" G
    screen "$s" "peek-09999"
    tmux send-keys -t "$s" Enter
    screen "$s" "message #9999"
    tmux send-keys -t "$s" Escape
    screen "$s" "10000/10000"
    echo "proc tui-browse10k $(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status") KiB" | tee -a "$log" >&2
    tmux send-keys -t "$s" q
    sleep 1
    tmux kill-session -t "$s" 2>/dev/null || true
    "$work/benchfix" sweep "$pv"
  fi

  sv="${prefix}snapshot"
  if only topology || only refresh || only ssh; then
    echo "== RabbitMQ $ver: topology of 2,000 queues (ladder binary, GET /api/queues)" >&2
    "$work/benchfix" ladders "$sv" 400
    qurl="$LADDER_TEST_API_URL/api/queues/$(jq -rn --arg v "$sv" '$v|@uri')"
    n=$($vbench --vhost "$sv" topology -o json | jq '.ladders | length')
    [ "$n" = 400 ] || { echo "bench.sh: ladder topology found $n ladders, want 400" >&2; exit 1; }
    n=$(curl -fsS -u guest:guest "$qurl" | jq length)
    [ "$n" = 2000 ] || { echo "bench.sh: GET /api/queues listed $n queues, want 2000" >&2; exit 1; }
    if only topology; then
      for _ in $(seq "$count"); do
        timed "$log" topology2000-ladder $vbench --vhost "$sv" topology -o json
        curled "$log" queues2000-get "$qurl"
      done
    fi
  fi

  if [ "$quick" != 1 ] && only refresh; then
    echo "== RabbitMQ $ver: ${window} s of refreshes every ${refresh} s (idle, TUI, GET /api/queues), broker CPU" >&2
    echo "proc refresh-settled $(settle)" | tee -a "$log" >&2
    t0=$(ticks "$beam")
    sleep "$window"
    echo "proc refresh-idle $(($(ticks "$beam") - t0)) ticks" | tee -a "$log" >&2
    s="ladder-bench-$$-refresh"
    tmuxes+=("$s")
    tui "$s" "$sv" --refresh "${refresh}s" >/dev/null
    screen "$s" "400 ladders · 2000 queues"
    t0=$(ticks "$beam")
    sleep "$window"
    echo "proc refresh-tui $(($(ticks "$beam") - t0)) ticks" | tee -a "$log" >&2
    tmux send-keys -t "$s" q
    sleep 1
    tmux kill-session -t "$s" 2>/dev/null || true
    t0=$(ticks "$beam")
    start=$(now)
    # As the TUI does: the next request ${refresh} s after each answer.
    end=$((start + window * 1000000000)) reqs=0
    while [ "$(now)" -lt "$end" ]; do
      curl -fsS -o /dev/null -u guest:guest "$qurl"
      reqs=$((reqs + 1))
      sleep "$(awk -v e="$end" -v n="$(now)" -v r="$refresh" 'BEGIN { x = (e - n) / 1e9; print (x < 0 ? 0 : x < r ? x : r) }')"
    done
    echo "proc refresh-get $(($(ticks "$beam") - t0)) ticks $reqs requests" | tee -a "$log" >&2
  fi
  if [ "$quick" != 1 ] && only ssh; then
    echo "== RabbitMQ $ver: ladder serve --ssh, 1 and 20 sessions for ${window} s, refresh every ${refresh} s: server RSS, broker CPU" >&2
    "$work/benchfix" ssh-key "$work/ssh_key" >"$work/authorized_keys"
    echo "proc ssh-settled $(settle)" | tee -a "$log" >&2
    t0=$(ticks "$beam")
    sleep "$window"
    echo "proc ssh-idle $(($(ticks "$beam") - t0)) ticks" | tee -a "$log" >&2
    for n in 1 20; do
      : >"$work/serve.log"
      LADDER_AMQP_URL="$LADDER_TEST_AMQP_URL" LADDER_API_URL="$LADDER_TEST_API_URL" LADDER_PROMETHEUS_URL="$LADDER_TEST_PROMETHEUS_URL" \
        LADDER_VHOST="$sv" LADDER_NO_COLOR=1 LADDER_CONFIG="$work/no-config.toml" \
        "$work/ladder" serve --ssh 127.0.0.1:0 --authorized-keys "$work/authorized_keys" --host-key "$work/ssh_host_key" \
        --max-sessions 20 --refresh "${refresh}s" 2>"$work/serve.log" &
      servepid=$!
      addr=
      for _ in $(seq 100); do
        addr=$(sed -n 's/.*listening on \([0-9.]*:[0-9]*\) .*/\1/p' "$work/serve.log" | head -1)
        [ -z "$addr" ] || break
        kill -0 "$servepid" 2>/dev/null || break
        sleep 0.1
      done
      [ -n "$addr" ] || { echo "bench.sh: ladder serve did not start:" >&2; cat "$work/serve.log" >&2; exit 1; }
      rss0=$(awk '/^VmRSS/ { print $2 }' "/proc/$servepid/status")
      # Kept open past the window: it starts once all show the ladders.
      "$work/benchfix" ssh-sessions "$addr" "$work/ssh_key" "$n" $((window + 5)) >"$work/ssh.out" 2>&1 &
      sshpid=$!
      until grep -q "^all $n sessions ready" "$work/ssh.out"; do
        if ! kill -0 "$sshpid" 2>/dev/null; then
          echo "bench.sh: benchfix ssh-sessions failed:" >&2
          cat "$work/ssh.out" "$work/serve.log" >&2
          exit 1
        fi
        sleep 0.1
      done
      t0=$(ticks "$beam") st0=$(ticks "$servepid")
      sleep "$window"
      t1=$(ticks "$beam") st1=$(ticks "$servepid")
      if ! wait "$sshpid"; then
        sshpid=
        echo "bench.sh: benchfix ssh-sessions failed:" >&2
        cat "$work/ssh.out" "$work/serve.log" >&2
        exit 1
      fi
      sshpid=
      grep -E '^(session|all)' "$work/ssh.out" >&2
      hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$servepid/status")
      kill "$servepid"
      wait "$servepid" || true
      servepid=
      echo "proc ssh-sessions-$n $((t1 - t0)) ticks $hwm KiB-peak $rss0 KiB-before $((st1 - st0)) server-ticks $(sed -n 's/^all [0-9]* sessions ready in //p' "$work/ssh.out") to-ready" | tee -a "$log" >&2
    done
  fi
  if only topology || only refresh || only ssh; then "$work/benchfix" sweep "$sv"; fi

  if only allvhosts; then
    echo "== RabbitMQ $ver: topology --all-vhosts of 50 vhosts, 2,000 queues (ladder binary, GET /api/queues/{vhost} each, GET /api/queues)" >&2
    av="${prefix}all."
    "$work/benchfix" vhosts "$av" 50 8
    # 50 new vhosts keep the broker busy for a while (their queues' first stats).
    echo "proc allvhosts-settled $(settle)" | tee -a "$log" >&2
    # A first run through the counting proxy: checked, its requests logged, not timed.
    rm -f "$work/proxy.url" "$work/proxy.log"
    "$work/benchfix" proxy "$work/proxy.url" "$work/proxy.log" &
    proxypid=$!
    for _ in $(seq 100); do [ -s "$work/proxy.url" ] && break; sleep 0.1; done
    [ -s "$work/proxy.url" ] || { echo "bench.sh: benchfix proxy did not start" >&2; exit 1; }
    "$work/ladder" --amqp-url "$LADDER_TEST_AMQP_URL" --api-url "$(cat "$work/proxy.url")" --prometheus-url "$LADDER_TEST_PROMETHEUS_URL" \
      topology --all-vhosts -o json >"$work/allvhosts.json"
    kill "$proxypid"
    wait "$proxypid"
    proxypid=
    n=$(jq --arg p "$av" '[.vhosts[] | select((.vhost | startswith($p)) and .ladders == 8 and .queues == 40)] | length' "$work/allvhosts.json")
    [ "$n" = 50 ] || { echo "bench.sh: ladder topology --all-vhosts showed $n of the 50 vhosts with 8 ladders and 40 queues" >&2; exit 1; }
    echo "proc allvhosts-ladder-requests $(wc -l <"$work/proxy.log") requests: $(awk '{ sub(/[?].*/, "", $2); print $1, $2 }' "$work/proxy.log" | sort | paste -sd, - | sed 's/,/, /g')" | tee -a "$log" >&2
    avurls=()
    for i in $(seq -f %02g 0 49); do avurls+=("$LADDER_TEST_API_URL/api/queues/$(jq -rn --arg v "$av$i" '$v|@uri')"); done
    n=0
    for u in "${avurls[@]}"; do n=$((n + $(curl -fsS -u guest:guest "$u" | jq length))); done
    [ "$n" = 2000 ] || { echo "bench.sh: GET /api/queues/{vhost} of the 50 vhosts listed $n queues, want 2000" >&2; exit 1; }
    echo "proc allvhosts-listed $(curl -fsS -u guest:guest "$LADDER_TEST_API_URL/api/queues" | jq length) queues in all vhosts" | tee -a "$log" >&2
    for _ in $(seq "$count"); do
      timed "$log" allvhosts-ladder "$work/ladder" --amqp-url "$LADDER_TEST_AMQP_URL" --api-url "$LADDER_TEST_API_URL" --prometheus-url "$LADDER_TEST_PROMETHEUS_URL" topology --all-vhosts -o json
      # As a shell loop does: one curl a vhost, one after another.
      start=$(now) size=0
      for u in "${avurls[@]}"; do size=$((size + $(curl -fsS -o /dev/null -w '%{size_download}' -u guest:guest "$u"))); done
      echo "proc allvhosts-pervhost-get $(($(now) - start)) ns $size B ${#avurls[@]} requests" | tee -a "$log" >&2
      curled "$log" allvhosts-all-get "$LADDER_TEST_API_URL/api/queues"
    done
    "$work/benchfix" sweep "$av"
  fi

  mv=$(metric "$log" BenchmarkMove20k msg/s | median)
  sh=$(metric "$log" BenchmarkShovel20k msg/s | median)
  one=$(metric "$log" BenchmarkOneByOne20k msg/s | median)
  mv100=$(metric "$log" BenchmarkMove100k msg/s | median)
  sh100=$(metric "$log" BenchmarkShovel100k msg/s | median)
  one100=$(metric "$log" BenchmarkOneByOne100k msg/s | median)
  # cpu BENCH: "broker + client µs" per moved message (medians); the
  # client of a shovel is the benchmark polling the target's depth.
  cpu() {
    awk -v b="$(metric "$log" "$1" broker-µs/msg | median)" -v c="$(metric "$log" "$1" self-µs/msg | median)" \
      'BEGIN { if (b == "-" || c == "-") print "-"; else printf "%.0f + %.0f µs", b, c }'
  }
  rd=$(metric "$log" BenchmarkRedriveOrigin20k msg/s | median)
  rd1=$(metric "$log" BenchmarkRedriveOneByOne20k msg/s | median)
  pk=$(metric "$log" BenchmarkPeek1000 ns/op | median)
  get=$(metric "$log" BenchmarkManagementGet1000 ns/op | median)
  snap=$(metric "$log" BenchmarkSnapshot2000 ns/op | median)
  pk10=$(proc "$log" peek10k-ladder 1 | median)
  pk10rss=$(proc "$log" peek10k-ladder 2 | median)
  get10=$(proc "$log" peek10k-get 1 | median)
  get10size=$(proc "$log" peek10k-get 2 | median)
  browse=$(proc "$log" tui-browse10k 1 | median)
  topo=$(proc "$log" topology2000-ladder 1 | median)
  topoget=$(proc "$log" queues2000-get 1 | median)
  topogetsize=$(proc "$log" queues2000-get 2 | median)
  allv=$(proc "$log" allvhosts-ladder 1 | median)
  allvreqs=$(proc "$log" allvhosts-ladder-requests 1 | median)
  allvlisted=$(proc "$log" allvhosts-listed 1 | median)
  allvper=$(proc "$log" allvhosts-pervhost-get 1 | median)
  allvpersize=$(proc "$log" allvhosts-pervhost-get 2 | median)
  allvget=$(proc "$log" allvhosts-all-get 1 | median)
  allvgetsize=$(proc "$log" allvhosts-all-get 2 | median)
  idle=$(proc "$log" refresh-idle 1 | median)
  rtui=$(proc "$log" refresh-tui 1 | median)
  rget=$(proc "$log" refresh-get 1 | median)
  sidle=$(proc "$log" ssh-idle 1 | median)
  s1=$(proc "$log" ssh-sessions-1 1 | median)
  s1rss=$(proc "$log" ssh-sessions-1 2 | median)
  s20=$(proc "$log" ssh-sessions-20 1 | median)
  s20rss=$(proc "$log" ssh-sessions-20 2 | median)
  # What 20 sessions cost the broker against one, net of the idle window.
  s20net=$(awk -v a="$s20" -v b="$s1" -v i="$sidle" 'BEGIN { if (a == "-" || b == "-" || i == "-" || b - i <= 0) print "-"; else printf "%.2f", (a - i) / (b - i) }')
  secs() { awk -v t="$1" -v hz="$hz" 'BEGIN { if (t == "-") print "-"; else printf "%.2f s", t / hz }'; }
  pk10r=$(ratio "$get10" "$pk10")
  topor=$(ratio "$topoget" "$topo")
  refr=$(ratio "$rget" "$rtui")
  net=$(awk -v a="$rget" -v b="$rtui" -v i="$idle" 'BEGIN { if (a == "-" || b == "-" || i == "-" || a - i <= 0 || b - i <= 0) print "-"; else printf "%.2f×", (a - i) / (b - i) }')
  allvr=$(ratio "$allvper" "$allv")
  allvgr=$(ratio "$allvget" "$allv")
  # heavy NAME WHAT LINE: row NAME LINE, or WHAT skipped with BENCH_QUICK=1.
  heavy() { if ! only "$1"; then :; elif [ "$quick" = 1 ]; then echo "| $2 | skipped (BENCH_QUICK=1) | | | | |"; else echo "$3"; fi; }
  bmib() { mib "$(awk -v b="$1" 'BEGIN { print (b == "-") ? "-" : b / 1024 }')"; }
  {
    echo "## RabbitMQ $ver"
    echo
    echo "| what | ladder | peer | ladder vs peer | target | |"
    echo "|---|---|---|---|---|---|"
    row move "| move 20,000 × 1 KiB persistent | $mv msg/s | shovel $sh msg/s | $(better "$(ratio "$mv" "$sh")" faster slower) | | |"
    row move "| move 20,000 × 1 KiB persistent | $mv msg/s | one at a time $one msg/s | $(better "$(ratio "$mv" "$one")" faster slower) | | |"
    row move "| CPU per message moved (20,000): broker + client | $(cpu BenchmarkMove20k) | shovel $(cpu BenchmarkShovel20k) | | | |"
    heavy move100k "move 100,000 × 1 KiB persistent" "| move 100,000 × 1 KiB persistent (1 run) | $mv100 msg/s | shovel $sh100 msg/s | $(better "$(ratio "$mv100" "$sh100")" faster slower) | | |"
    heavy move100k "move 100,000 × 1 KiB persistent" "| move 100,000 × 1 KiB persistent (1 run) | $mv100 msg/s | one at a time, all 100,000: $one100 msg/s | $(better "$(ratio "$mv100" "$one100")" faster slower) | | |"
    row redrive "| redrive 20,000 dead-lettered from 10 mains to their origins | $rd msg/s | one at a time by x-death $rd1 msg/s | $(better "$(ratio "$rd" "$rd1")" faster slower) | | |"
    row peek1k "| peek 1,000 × 1 KiB (in process) | $(ms "$pk") | management get $(ms "$get") | $(better "$(ratio "$get" "$pk")" faster slower) | | |"
    row peek10k "| peek 10,000 × 1 KiB (\`ladder peek\` process) | $(ms "$pk10"), peak RSS $(mib "$pk10rss") | management get (curl) $(ms "$get10"), $(bmib "$get10size") response | $(better "$pk10r" faster slower) | ≥ 3× faster | $(atleast "$pk10r" 3) |"
    row peek10k "| TUI: browse 10,000 × 1 KiB (open, last row, a message) | peak RSS $(mib "$browse") | | | ≤ 100 MiB | $(atmost "$(awk -v k="$browse" 'BEGIN { print (k == "-") ? "-" : k / 1024 }')" 100) |"
    row peek1k "| snapshot of 2,000 queues (+ discovery, findings; in process) | $(ms "$snap") | | | | |"
    row topology "| topology of 2,000 queues with bindings (\`ladder topology\` process) | $(ms "$topo") | GET /api/queues (curl) $(ms "$topoget"), $(bmib "$topogetsize") | $(better "$topor" faster slower) | ≥ 2× faster | $(atleast "$topor" 2) |"
    heavy refresh "TUI refresh every ${refresh} s for ${window} s: broker CPU" "| TUI refresh every ${refresh} s for ${window} s: broker CPU (1 run) | $(secs "$rtui") | GET /api/queues every ${refresh} s: $(secs "$rget") | $(better "$refr" cheaper costlier) | ≥ 3× cheaper | $(atleast "$refr" 3) |"
    heavy ssh "ladder serve --ssh, 1 session" "| \`ladder serve --ssh\`, 1 session, refresh every ${refresh} s for ${window} s: broker CPU, server peak RSS (1 run) | $(secs "$s1"), peak RSS $(mib "$s1rss") | | | | |"
    heavy ssh "ladder serve --ssh, 20 sessions" "| \`ladder serve --ssh\`, 20 sessions, refresh every ${refresh} s for ${window} s: broker CPU, server peak RSS (1 run) | $(secs "$s20"), peak RSS $(mib "$s20rss") | 1 session: $(secs "$s1"), peak RSS $(mib "$s1rss") | broker CPU net of idle $(awk -v r="$s20net" 'BEGIN { print (r == "-") ? "-" : r "× one session" }') | not to grow with sessions (≤ 1.5× one's, net) | $(atmost "$s20net" 1.5) |"
    row allvhosts "| topology of 50 vhosts, 2,000 queues with bindings (\`ladder topology --all-vhosts\` process) | $(ms "$allv"), $allvreqs requests | GET /api/queues/{vhost} of each in turn (curl) $(ms "$allvper"), 50 requests, $(bmib "$allvpersize") | $(better "$allvr" faster slower) | | |"
    row allvhosts "| topology of 50 vhosts, 2,000 queues with bindings (\`ladder topology --all-vhosts\` process) | $(ms "$allv"), $allvreqs requests | GET /api/queues, all vhosts at once (curl) $(ms "$allvget"), 1 request, $(bmib "$allvgetsize") | $(better "$allvgr" faster slower) | | |"
    echo
    if only allvhosts && [ "$allvlisted" != 2000 ]; then
      echo "The broker held $allvlisted queues in all vhosts while the all-vhosts rows ran: ladder and the one GET /api/queues read the others' too."
      echo
    fi
    if [ "$quick" != 1 ] && only ssh; then
      echo "The broker's CPU over the ${window} s before the SSH sessions with no client: $(secs "$sidle"); net of it 1 session costs $(secs "$(awk -v a="$s1" -v i="$sidle" 'BEGIN { print (a == "-" || i == "-") ? "-" : a - i }')"), 20 sessions $(secs "$(awk -v a="$s20" -v i="$sidle" 'BEGIN { print (a == "-" || i == "-") ? "-" : a - i }')") ($(secs "$(awk -v a="$s20" -v b="$s1" 'BEGIN { print (a == "-" || b == "-") ? "-" : (a - b) / 19 }')") of broker CPU per extra session over ${window} s); the server's RSS grew $(awk -v a="$s20rss" -v b="$s1rss" 'BEGIN { if (a == "-" || b == "-") print "-"; else printf "%.1f MiB", (a - b) / 19 / 1024 }') per extra session. One viewer in a local terminal: the TUI refresh row."
      echo
    fi
    if [ "$quick" != 1 ] && only refresh; then
      echo "The broker's CPU over the same ${window} s with no client: $(secs "$idle"); net of it the TUI costs $(secs "$(awk -v a="$rtui" -v i="$idle" 'BEGIN { print a - i }')") and the polling $(secs "$(awk -v a="$rget" -v i="$idle" 'BEGIN { print a - i }')") ($(nb=$(better "$net" cheaper costlier); if [ "$nb" = - ]; then echo "no ratio: the idle window cost as much as a side, others were busy on the broker"; else echo "$nb"; fi))."
      echo
    fi
    echo '```'
    cat "$log"
    echo '```'
    echo
  } >>"$md"
done

if only go; then
  echo "== Go benchmarks: engine and UI frames" >&2
  go test -run '^$' -bench . -benchmem -count "$count" ./retry/... ./ui/... | grep -E '^Benchmark' | tee "$work/go.txt" >&2
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
  } >>"$md"
fi
cat "$notes" >>"$md"
if [ "$out" = - ]; then
  cat "$md"
else
  cp "$md" "$out"
  echo "bench.sh: wrote $out" >&2
fi
