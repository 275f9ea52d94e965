#!/usr/bin/env bash
# brokercpu.sh — what an idle client costs the broker on a big vhost.
#
# Declares a vhost of QUEUES queues (QUEUES/5 ladders: main, three TTL tiers,
# DLQ, with their bindings; the first 60 DLQs hold 50 messages each), lets the
# broker settle, then measures the CPU time of its beam.smp process
# (utime + stime from /proc/PID/stat) over WINDOW seconds for each setup:
#
#   idle      no client at all
#   webui     what the management UI's Queues page polls every 5 s (its
#             default "update every"; js/main.js renderQueues + partial_update,
#             the same in 3.10 and 4.3):
#             GET /api/queues/VHOST?page=1&page_size=100&name=&use_regex=false&pagination=true
#             then GET /api/vhosts, one after the other
#   ladder-2s the ladder TUI (this tree's binary) on its home screen with --refresh 2s
#             (the default before the refresh adapted to the vhost's size)
#   ladder    the same with the default refresh
#   main      LADDER_MAIN (a binary built from an older tree) with its default refresh
#
# Setups run one after another, ROUNDS times in turn (load drifts); the
# table gives each setup's median as a share of one core.
#
# --per-request also measures what one request of each kind costs the broker
# (its CPU over 20 of them in a row, divided by 20): ladder's full queue
# read, its depth-only read, exchanges, bindings, the Prometheus scrape of
# the vhost, and the web UI's two requests.
#
# By default the broker is a node of its own, started for the run and
# stopped after it (others' tests on the shared brokers cost the broker
# more than any setup here): 3.10 from the system's package (AMQP 5681,
# management 15681, Prometheus 15691), 4.3 in scripts/rabbitmq.sh's chroot
# (5682, 15682, 15689); both need root. --shared measures the shared test
# broker of that version instead (scripts/rabbitmq.sh's ports).
#
# Usage: scripts/brokercpu.sh [--version 3.10|4.3] [--shared] [--queues N] [--window S] [--rounds N] [--setups "idle webui ladder-2s ladder"]
# Environment: LADDER_MAIN=/path/to/ladder adds the "main" setup. Output: a
# markdown table on stdout, the raw figures on stderr. Everything it declares
# is in one vhost, ladder-test.brokercpu.PID, deleted at the end (Ctrl+C too).
set -euo pipefail
cd "$(dirname "$0")/.."

version=3.10 queues=2500 window=60 rounds=1 setups="idle webui ladder-2s ladder" shared=0 perreq=0
while [ $# -gt 0 ]; do
  case "$1" in
    --per-request) perreq=1; shift ;;
    --shared) shared=1; shift ;;
    --version) version=$2; shift 2 ;;
    --queues) queues=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --setups) setups=$2; shift 2 ;;
    *) echo "usage: $0 [--version 3.10|4.3] [--shared] [--queues N] [--window S] [--rounds N] [--setups LIST]" >&2; exit 2 ;;
  esac
done
if [ -n "${LADDER_MAIN:-}" ]; then
  case " $setups " in *" main "*) ;; *) setups="$setups main" ;; esac
fi

case "$version:$shared" in
  3.10:1) amqp=5672 api=15672 prom=15692 ;;
  4.3:1) amqp=5673 api=15673 prom=15693 ;;
  4.0:1) amqp=5674 api=15674 prom=15694 ;;
  3.10:0) amqp=5681 api=15681 prom=15691 node=ladder310cpu@localhost dist=25681 epmd=4381 ;;
  4.3:0) amqp=5682 api=15682 prom=15689 node=ladder43cpu@localhost dist=25682 epmd=4382 ;;
  *) echo "brokercpu.sh: version $version (want 3.10 or 4.3; 4.0 only with --shared)" >&2; exit 2 ;;
esac
for c in curl jq tmux ss; do command -v "$c" >/dev/null || { echo "brokercpu.sh: $c is needed" >&2; exit 1; }; done

state=${LADDER_STATE_DIR:-/var/tmp/ladder}
root43="$state/rabbitmq-4.3/root"
# The private node's files: on the host for 3.10, in the chroot for 4.3.
nodedir="/var/tmp/ladder-brokercpu-$version"
top=
[ "$version" = 4.3 ] && top=$root43

export LADDER_TEST_AMQP_URL="amqp://guest:guest@127.0.0.1:$amqp/" LADDER_TEST_API_URL="http://127.0.0.1:$api" LADDER_TEST_PROMETHEUS_URL="http://127.0.0.1:$prom"
work=$(mktemp -d)
vh="ladder-test.brokercpu.$$"
session="brokercpu-$$"

# noderun CMD ARGS…: a RabbitMQ command for the private node, as its user.
noderun() {
  local env=(HOME=/var/lib/rabbitmq RABBITMQ_NODENAME="$node" RABBITMQ_DIST_PORT="$dist" ERL_EPMD_PORT="$epmd"
    RABBITMQ_CONFIG_FILE="$nodedir/rabbitmq.conf" RABBITMQ_ENABLED_PLUGINS_FILE="$nodedir/enabled_plugins"
    RABBITMQ_MNESIA_BASE="$nodedir/mnesia" RABBITMQ_LOG_BASE="$nodedir/log")
  if [ "$version" = 3.10 ]; then
    runuser -u rabbitmq -- env "${env[@]}" "/usr/lib/rabbitmq/bin/$1" "${@:2}"
  else
    chroot "$root43" runuser -u rabbitmq -- env "${env[@]}" "/usr/lib/rabbitmq/bin/$1" "${@:2}"
  fi
}
started=0
node_up() {
  [ "$(id -u)" = 0 ] || { echo "brokercpu.sh: a node of its own needs root (or use --shared)" >&2; exit 1; }
  if [ "$version" = 4.3 ]; then
    [ -d "$root43/usr/lib/rabbitmq" ] && mountpoint -q "$root43/proc" ||
      { echo "brokercpu.sh: no running 4.3 chroot: scripts/rabbitmq.sh up --version 4.3 first" >&2; exit 1; }
  fi
  if curl -fsS -m 3 "http://127.0.0.1:$api/" >/dev/null 2>&1; then
    echo "brokercpu.sh: port $api already answers: another run's node? (rabbitmqctl -n $node stop)" >&2
    exit 1
  fi
  rm -rf "${top}${nodedir:?}"
  mkdir -p "$top$nodedir/mnesia" "$top$nodedir/log"
  printf '%s\n' "listeners.tcp.default = 127.0.0.1:$amqp" "management.tcp.ip = 127.0.0.1" "management.tcp.port = $api" \
    "prometheus.tcp.ip = 127.0.0.1" "prometheus.tcp.port = $prom" >"$top$nodedir/rabbitmq.conf"
  echo '[rabbitmq_management,rabbitmq_prometheus].' >"$top$nodedir/enabled_plugins"
  if [ "$version" = 3.10 ]; then chown -R rabbitmq:rabbitmq "$nodedir"; else chroot "$root43" chown -R rabbitmq:rabbitmq "$nodedir"; fi
  started=1
  echo "== starting node $node (logs: $top$nodedir/log)" >&2
  noderun rabbitmq-server -detached >/dev/null 2>&1 || true
  local deadline=$((SECONDS + 120))
  until curl -fsS -m 3 -u guest:guest "http://127.0.0.1:$api/api/overview" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || { echo "brokercpu.sh: node $node did not answer on $api within 2 min (logs: $top$nodedir/log)" >&2; exit 1; }
    sleep 1
  done
}
node_down() {
  [ "$started" = 1 ] || return 0
  noderun rabbitmqctl -n "$node" stop >/dev/null 2>&1
  rm -rf "${top}${nodedir:?}"
}

cleanup() {
  local rc=$?
  set +e
  tmux kill-session -t "$session" 2>/dev/null
  [ -x "$work/benchfix" ] && "$work/benchfix" sweep "$vh" 2>/dev/null
  node_down
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

CGO_ENABLED=0 go build -trimpath -o "$work/ladder" .
go build -o "$work/benchfix" ./scripts/benchfix
[ "$shared" = 1 ] || node_up

beam=$(ss -ltnpH "sport = :$api" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1)
[ -n "$beam" ] && [ -r "/proc/$beam/stat" ] || { echo "brokercpu.sh: no beam.smp listening on port $api" >&2; exit 1; }
hz=$(getconf CLK_TCK)
ticks() { awk '{ print $14 + $15 }' "/proc/$beam/stat"; }
ver=$(curl -fsS -u guest:guest "$LADDER_TEST_API_URL/api/overview?columns=rabbitmq_version" | jq -r .rabbitmq_version)

echo "== RabbitMQ $ver (pid $beam): vhost $vh with $queues queues" >&2
"$work/benchfix" ladders "$vh" $((queues / 5))
"$work/benchfix" dlqs "$vh" 60 50
vq=$(jq -rn --arg v "$vh" '$v|@uri')

# Settle: the new queues' first stats, the messages' writes. Up to 3 min,
# until the broker uses under 15 % of a core over 10 s (others' tests on a
# shared broker may never let it).
settled=no
for _ in $(seq 18); do
  t0=$(ticks); sleep 10
  if [ $(($(ticks) - t0)) -lt $((hz * 15 / 10)) ]; then settled=yes; break; fi
done
echo "settled: $settled" >&2

# tui BINARY ARGS…: the binary in a detached 80×24 tmux pane on the vhost,
# back when its home screen shows the ladders.
tui() {
  local bin=$1
  shift
  TERM=xterm-256color tmux new-session -d -s "$session" -x 80 -y 24 \
    "exec env NO_COLOR=1 $bin --amqp-url $LADDER_TEST_AMQP_URL --api-url $LADDER_TEST_API_URL --prometheus-url $LADDER_TEST_PROMETHEUS_URL --vhost $vh --read-only $*"
  local deadline=$((SECONDS + 60))
  until tmux capture-pane -p -t "$session" 2>/dev/null | grep -qF "$((queues / 5)) ladders"; do
    if [ $SECONDS -ge $deadline ]; then
      echo "brokercpu.sh: the TUI never showed its ladders:" >&2
      tmux capture-pane -p -t "$session" >&2 || true
      return 1
    fi
    sleep 0.2
  done
}
untui() {
  tmux capture-pane -p -t "$session" | head -1 >&2 || true
  tmux send-keys -t "$session" q
  sleep 1
  tmux kill-session -t "$session" 2>/dev/null || true
}

# webui: the Queues page's poll, every 5 s from its start (setInterval).
webui() {
  local end=$((SECONDS + window)) next left
  while [ $SECONDS -lt $end ]; do
    next=$(($(date +%s%N) + 5000000000))
    curl -fsS -o /dev/null -u guest:guest "$LADDER_TEST_API_URL/api/queues/$vq?page=1&page_size=100&name=&use_regex=false&pagination=true"
    curl -fsS -o /dev/null -u guest:guest "$LADDER_TEST_API_URL/api/vhosts"
    left=$(((next - $(date +%s%N)) / 1000000))
    if [ "$left" -gt 0 ]; then sleep "$(awk -v ms="$left" 'BEGIN { print ms / 1000 }')"; fi
  done
}

# measure SETUP: prints "SETUP TICKS", the broker's CPU over the window.
measure() {
  local t0 t1
  case "$1" in
    idle) t0=$(ticks); sleep "$window"; t1=$(ticks) ;;
    webui) t0=$(ticks); webui; t1=$(ticks) ;;
    ladder-2s | ladder | main)
      case "$1" in
        ladder-2s) tui "$work/ladder" --refresh 2s ;;
        ladder) tui "$work/ladder" ;;
        main) tui "$LADDER_MAIN" ;;
      esac
      t0=$(ticks); sleep "$window"; t1=$(ticks)
      untui
      ;;
    *) echo "brokercpu.sh: unknown setup $1" >&2; exit 2 ;;
  esac
  echo "$1 $((t1 - t0))"
}

if [ "$perreq" = 1 ]; then
  a="$LADDER_TEST_API_URL/api"
  cols="name,type,arguments,policy,effective_policy_definition,messages,messages_ready,messages_unacknowledged,consumers,head_message_timestamp,messages_dlx,durable,exclusive,message_stats.publish,message_stats.publish_details.rate,message_stats.deliver_get,message_stats.deliver_get_details.rate,message_stats.ack,message_stats.ack_details.rate,message_stats.redeliver,message_stats.redeliver_details.rate,message_stats.deliver_no_ack,message_stats.get_no_ack"
  fams="family=queue_coarse_metrics&family=queue_consumer_count&family=queue_exchange_metrics&family=queue_delivery_metrics"
  echo "| request (RabbitMQ $ver, $queues queues) | broker CPU per request | answer |"
  echo "|---|---|---|"
  for req in "ladder queues|$a/queues/$vq?columns=$cols" \
    "ladder depths only|$a/queues/$vq?disable_stats=true&enable_queue_totals=true&columns=name,messages,messages_ready,messages_unacknowledged" \
    "ladder exchanges|$a/exchanges/$vq?columns=name,type,arguments,messages_delayed" \
    "ladder bindings|$a/bindings/$vq" \
    "prometheus /metrics/detailed of the vhost|http://127.0.0.1:$prom/metrics/detailed?vhost=$vq&$fams" \
    "web UI queues page|$a/queues/$vq?page=1&page_size=100&name=&use_regex=false&pagination=true" \
    "web UI vhosts|$a/vhosts"; do
    name=${req%%|*} u=${req#*|}
    size=$(curl -fsS -o /dev/null -w '%{size_download}' -u guest:guest "$u")
    t0=$(ticks)
    for _ in $(seq 20); do curl -fsS -o /dev/null -u guest:guest "$u"; done
    t1=$(ticks)
    echo "| $name | $(awk -v t=$((t1 - t0)) -v hz="$hz" 'BEGIN { printf "%.0f ms", t / hz / 20 * 1000 }') | $(awk -v b="$size" 'BEGIN { printf "%.0f KiB", b / 1024 }') |"
  done
  echo
fi

raw="$work/raw"
: >"$raw"
for r in $(seq "$rounds"); do
  for s in $setups; do
    line=$(measure "$s")
    echo "round $r: $line ticks over ${window} s" >&2
    echo "$line" >>"$raw"
  done
done

pct() { awk -v t="$1" -v hz="$hz" -v w="$window" 'BEGIN { printf "%.1f %%", t / hz / w * 100 }'; }
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2] + a[NR/2+1]) / 2 }'; }
where="a node of its own"
[ "$shared" = 1 ] && where="the shared test broker"
echo "| RabbitMQ $ver ($where), $queues queues | broker CPU, share of one core (median of $rounds × ${window} s) |"
echo "|---|---|"
for s in $setups; do
  echo "| $s | $(pct "$(awk -v s="$s" '$1 == s { print $2 }' "$raw" | median)") |"
done
echo
echo "(settled before measuring: $settled)"
