#!/usr/bin/env bash
# test.sh — the whole suite against real brokers, leaving each as found.
# VERSIONS (default "3.10 4.3"; make test-matrix adds 4.0) are started by
# scripts/rabbitmq.sh, while the tests compile; the first round runs every
# package under the race detector, the others the packages that talk to a
# broker (the unit tests run once), without it. TESTFLAGS adds go test
# flags (-v to see each test's time). For each: sweep
# what interrupted runs left (ladder-test.* names), record the broker's
# vhosts, queues, exchanges and policies, optionally fill it with unrelated
# ladders and queues (LADDER_TEST_NOISE=1, as CI does), run the tests,
# remove the noise, and fail if anything was left behind or went missing.
# The TLS test (internal/cli, LADDER_TEST_TLS=1) starts and stops its own
# node in the 4.3 chroot (rabbitmq.sh --tls), once: in the first round. So
# do the fault tests (LADDER_TEST_OWNBROKER=1: a memory alarm, a restart)
# with the own node (rabbitmq.sh --own), stopped after that round. The
# cluster tests (LADDER_TEST_CLUSTER=1: nodes stopped under topology and a
# move) run in the 4.3 round on three 4.3 nodes (rabbitmq.sh --cluster),
# stopped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
PKGS=${PKGS:-./...}
LIVE_PKGS=${LIVE_PKGS:-"./broker/... ./internal/cli ./internal/metrics ./internal/conformance ./examples/..."}
VERSIONS=${VERSIONS:-"3.10 4.3"}
work=$(mktemp -d)
# A TLS node an interrupted test left running (a timeout skips t.Cleanup).
tls_down() { if (exec 3<>/dev/tcp/127.0.0.1/5676) 2>/dev/null; then scripts/rabbitmq.sh down --version 4.3 --tls || true; fi; }
# The own node, which the fault tests start and leave running (stopped after
# the first round, or here when interrupted).
own_down() { if (exec 3<>/dev/tcp/127.0.0.1/5677) 2>/dev/null; then scripts/rabbitmq.sh down --version 4.3 --own || true; fi; }
# The cluster, started before the rounds for the 4.3 round (not beside a
# round's tests: its start holds the 4.3 chroot's lock and both cores),
# stopped at the end.
cluster_down() { scripts/rabbitmq.sh down --cluster || true; }
trap 'rm -rf "$work"; tls_down; own_down; cluster_down' EXIT
"$GO" build -o "$work/brokerstate" ./scripts/brokerstate
# The real binary, built once for every test process that runs it (one
# build in each, beside the race-built tests, took minutes on two cores).
"$GO" build -o "$work/ladder" .
export LADDER_TEST_BIN="$work/ladder"
bs() { "$work/brokerstate" "$@"; }

ports() {
  case "$1" in
    3.10) echo 5672 15672 15692 ;;
    4.3) echo 5673 15673 15693 ;;
    4.0) echo 5674 15674 15694 ;;
  esac
}

# The 4.3 node with management stats off serves the tests of rates from
# Prometheus (brokertest.RequireNoStats), whatever VERSIONS says; so does
# 4.0 the tests of what differs by version (brokertest.RequireVersion, in
# every round): swept before and checked after the whole run.
scripts/rabbitmq.sh up --version 4.3 --no-stats
scripts/rabbitmq.sh up --version 4.0
on40() { read -r amqp api prom < <(ports 4.0); LADDER_TEST_AMQP_URL="amqp://guest:guest@127.0.0.1:$amqp/" LADDER_TEST_API_URL="http://127.0.0.1:$api" LADDER_TEST_PROMETHEUS_URL="http://127.0.0.1:$prom" "$@"; }
on40 "$work/brokerstate" sweep
on40 "$work/brokerstate" save "$work/before-4.0-all"

# Every fuzz target briefly (LADDER_FUZZTIME, 0 skips), beside the rounds
# after the first (they run without the race detector: cores to spare);
# a crasher is kept under testdata/fuzz and replays in every later go test.
fuzz=${LADDER_FUZZTIME:-2s}
fuzzpid=
fuzzstart=0
fuzz_bg() {
  if [ "$fuzz" != 0 ] && [ -z "$fuzzpid" ]; then
    fuzzstart=$SECONDS
    scripts/fuzz.sh "$fuzz" >"$work/fuzz.log" 2>&1 & fuzzpid=$!
  fi
}
# Every node the rounds need starts while the tests compile: the own node
# (started by the first test that needed it, it waited 3 minutes for a busy
# machine), each round's broker, and the cluster when a 4.3 round comes.
# One after the other (the 4.3 chroot has one lock).
up_all() {
  set -e
  for v in $VERSIONS; do scripts/rabbitmq.sh up --version "$v"; done
  scripts/rabbitmq.sh up --version 4.3 --own
  case " $VERSIONS " in *" 4.3 "*) scripts/rabbitmq.sh up --cluster ;; esac
}
up_all >"$work/up.log" 2>&1 & uppid=$!
rc=0
"$GO" test -race -count=1 -run '^$' $PKGS >/dev/null || rc=1
wait "$uppid" || { cat "$work/up.log"; rc=1; }
first=1
for v in $VERSIONS; do
  if [ $first = 0 ]; then fuzz_bg; fi
  scripts/rabbitmq.sh up --version "$v"
  read -r amqp api prom < <(ports "$v")
  export LADDER_TEST_AMQP_URL="amqp://guest:guest@127.0.0.1:$amqp/" LADDER_TEST_API_URL="http://127.0.0.1:$api" LADDER_TEST_PROMETHEUS_URL="http://127.0.0.1:$prom"
  pkgs=$LIVE_PKGS
  noise=0
  tls=0
  own=0
  cluster=0
  if [ "$v" = 4.3 ]; then
    scripts/rabbitmq.sh up --cluster || rc=1
    cluster=1
  fi
  if [ $first = 1 ]; then
    pkgs=$PKGS
    noise=${LADDER_TEST_NOISE:-0}
    tls=1
    own=1
  fi
  first=0
  echo "== RabbitMQ $v: $pkgs"
  start=$SECONDS
  # The race detector in the first round, where every package runs; the
  # others test what differs by broker version, on the same code, without
  # it (it made them twice as long on two cores).
  race=
  if [ "$own" = 1 ]; then race=-race; fi
  bs sweep
  bs save "$work/before-$v"
  if [ "$noise" = 1 ]; then bs noise up; fi
  # -timeout 25m: a bound for a machine with both cores busy (go test's
  # 10 minutes panicked whole packages there), not a budget.
  # -parallel 8 and -p 3: the slow live tests wait on the broker, not on a
  # core. internal/cli, the longest by far (its tests set the environment,
  # so they cannot run in parallel within one process), runs as two
  # processes at once beside the rest, its tests split by name.
  gotest() { LADDER_REQUIRE_BROKER=1 LADDER_TEST_TLS=$tls LADDER_TEST_OWNBROKER=$own LADDER_TEST_CLUSTER=$cluster "$GO" test $race -count=1 -timeout 25m -parallel 8 ${TESTFLAGS:-} "$@"; }
  cli=github.com/ladder-tui/ladder/internal/cli
  all=$("$GO" list $pkgs)
  others=$(grep -vx "$cli" <<<"$all" || true)
  pids=()
  gotest -p 3 $others & pids+=($!)
  if grep -qx "$cli" <<<"$all"; then
    gotest -run '^(Test|Fuzz|Example)[A-Ma-m]' "$cli" & pids+=($!)
    gotest -run '^(Test|Fuzz|Example)[^A-Ma-m]' "$cli" & pids+=($!)
  fi
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  if [ "$own" = 1 ]; then own_down; fi
  if [ "$noise" = 1 ]; then bs noise down || rc=1; fi
  bs check "$work/before-$v" || rc=1
  echo "== RabbitMQ $v: $((SECONDS - start)) s"
done
on40 "$work/brokerstate" check "$work/before-4.0-all" || rc=1
fuzz_bg # when there was one round only
if [ -n "$fuzzpid" ]; then
  wait "$fuzzpid" || { cat "$work/fuzz.log"; rc=1; }
  echo "== fuzz: $(grep -c '^== ' "$work/fuzz.log") targets, $fuzz each: $((SECONDS - fuzzstart)) s"
fi
exit $rc
