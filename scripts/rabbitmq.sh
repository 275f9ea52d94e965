#!/usr/bin/env bash
# rabbitmq.sh up|down|status [--version 3.10|4.0|4.3] [--no-stats | --tls [CERTDIR] | --own | --cluster]
# rabbitmq.sh ctl --version 4.3 [--no-stats | --tls | --own | --cluster N] -- RABBITMQCTL-ARGS…
# — a RabbitMQ with the plugins ladder's tests need, guest/guest, on loopback:
#
#   version          where                              AMQP  management  prometheus
#   3.10             the system's Debian rabbitmq-server 5672  15672       15692
#   4.0              Debian trixie's, in a chroot        5674  15674       15694
#   4.3              Debian sid's, in a chroot           5673  15673       15693
#   4.3 --no-stats   a second node in the 4.3 chroot     5675  15675       15695
#   4.3 --tls DIR    a third node in the 4.3 chroot      5676  15676       15696
#                    (amqps and https only)
#   4.3 --own        a fourth node in the 4.3 chroot     5677  15677       15697
#                    (for tests that stop it or raise its alarms)
#   4.3 --cluster    three more nodes in the 4.3 chroot, 5681  15681       15781
#                    one cluster: rabbit43c1@localhost,  5682  15682       15782
#                    rabbit43c2@…, rabbit43c3@…          5683  15683       15783
#                    (distribution 25681–25683, one epmd on 4381)
#
# --no-stats starts a node with management stats switched off
# (management.disable_stats, management_agent.disable_metrics_collector):
# its queues have no message_stats and rates come from Prometheus.
#
# --tls CERTDIR (up) starts a node that speaks only TLS: amqps on 5676 and
# the management API over https on 15676, with CERTDIR's ca.pem, server.pem
# and server-key.pem (PEM) copied into the chroot for the rabbitmq user.
# One that already answers is reused when it has those very files, else
# restarted with them (when this script started it). `down --tls` takes no
# CERTDIR and stops only that node.
#
# --own is a node no other test uses (plain AMQP, http management, stats
# on): the fault tests (brokertest.OwnNode) stop and start it, and set its
# memory high watermark through `ctl`, which runs rabbitmqctl against the
# chosen node as the chroot sees it (`ctl --own -- set_vm_memory_high_watermark 0.4`).
#
# --cluster (implies --version 4.3) is three nodes joined in one cluster,
# for tests of what a cluster changes (brokertest.RequireCluster: a quorum
# queue's leader moving when its node stops). `up --cluster` starts those
# not running (a node whose VM runs with its app stopped gets start_app),
# joins to rabbit43c1 those not in its cluster, and waits until the three
# run as members and each management API answers; `down --cluster` stops
# those this script started; `ctl --cluster N` (N = 1, 2 or 3) runs
# rabbitmqctl against node N (`ctl --cluster 2 -- stop_app`).
#
# Idempotent: a broker that already answers is reused (its plugins enabled,
# online when its management API does not answer). 3.10 is installed if
# missing and started; 4.0 and 4.3 are bootstrapped (debootstrap, once,
# about 30 s and 400 MB) under $LADDER_STATE_DIR and started there with
# their own node name, distribution and epmd ports. `down` stops only what
# this script started. Every wait is bounded and says what to read.
set -euo pipefail

PLUGINS=(rabbitmq_management rabbitmq_shovel rabbitmq_shovel_management rabbitmq_prometheus)
WAIT_SECONDS=${LADDER_RABBITMQ_WAIT:-120}
STATE_DIR=${LADDER_STATE_DIR:-/var/tmp/ladder}

say() { echo "rabbitmq.sh: $*" >&2; }
die() { say "$*"; exit 1; }

cmd=${1:-}
shift || true
VERSION=3.10
NOSTATS=
TLS=
OWN=
CLUSTER=
CLUSTER_N=
VERSION_SET=
CTL_ARGS=()
CERTDIR=
while [ $# -gt 0 ]; do
  case "$1" in
    --no-stats) NOSTATS=1; shift ;;
    --tls)
      TLS=1
      shift
      if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then CERTDIR=$1; shift; fi
      ;;
    --tls=*) TLS=1; CERTDIR=${1#--tls=}; shift ;;
    --own) OWN=1; shift ;;
    --cluster)
      CLUSTER=1
      shift
      if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then CLUSTER_N=$1; shift; fi
      ;;
    --cluster=*) CLUSTER=1; CLUSTER_N=${1#--cluster=}; shift ;;
    --) shift; CTL_ARGS=("$@"); break ;;
    --version) VERSION=${2:-}; VERSION_SET=1; shift 2 || die "--version needs 3.10, 4.0 or 4.3" ;;
    --version=*) VERSION=${1#--version=}; VERSION_SET=1; shift ;;
    *) die "unknown argument $1 (usage: $0 up|down|status|ctl [--version 3.10|4.0|4.3] [--no-stats | --tls [CERTDIR] | --own | --cluster [N]] [-- RABBITMQCTL-ARGS…])" ;;
  esac
done
if [ -n "$CLUSTER" ]; then
  [ -z "$VERSION_SET" ] || [ "$VERSION" = 4.3 ] || die "--cluster: only with --version 4.3"
  VERSION=4.3
fi

case "$VERSION" in
  3.10) AMQP_PORT=${LADDER_RABBITMQ_AMQP_PORT:-5672}; API_PORT=${LADDER_RABBITMQ_API_PORT:-15672} ;;
  4.3) AMQP_PORT=5673; API_PORT=15673; PROM_PORT=15693; SUITE=sid; NODE=rabbit43@localhost; DIST_PORT=25673; EPMD_PORT=4373 ;;
  4.0) AMQP_PORT=5674; API_PORT=15674; PROM_PORT=15694; SUITE=trixie; NODE=rabbit40@localhost; DIST_PORT=25674; EPMD_PORT=4374 ;;
  *) die "--version $VERSION: want 3.10, 4.0 or 4.3" ;;
esac
ROOT="$STATE_DIR/rabbitmq-$VERSION/root"
MARK="$STATE_DIR/rabbitmq-$VERSION.started-by-ladder"
[ "$VERSION" = 3.10 ] && MARK="$STATE_DIR/rabbitmq.started-by-ladder"
CONF=/etc/rabbitmq/rabbitmq.conf
if [ -n "$NOSTATS" ]; then
  [ "$VERSION" = 4.3 ] || die "--no-stats: only with --version 4.3"
  AMQP_PORT=5675; API_PORT=15675; PROM_PORT=15695; NODE=rabbit43nostats@localhost; DIST_PORT=25675; EPMD_PORT=4375
  MARK="$STATE_DIR/rabbitmq-$VERSION-nostats.started-by-ladder"
  CONF=/etc/rabbitmq/rabbitmq-nostats.conf
fi
TLS_DIR=/etc/rabbitmq/tls # in the chroot
TLS_FILES=(ca.pem server.pem server-key.pem)
if [ -n "$TLS" ]; then
  [ "$VERSION" = 4.3 ] || die "--tls: only with --version 4.3"
  [ -z "$NOSTATS" ] || die "--tls and --no-stats: one node at a time"
  if [ "$cmd" = up ]; then
    [ -n "$CERTDIR" ] || die "up --tls needs a CERTDIR holding ${TLS_FILES[*]}"
    for f in "${TLS_FILES[@]}"; do
      [ -r "$CERTDIR/$f" ] || die "--tls $CERTDIR: no readable $f (want ${TLS_FILES[*]}, PEM)"
    done
  fi
  AMQP_PORT=5676; API_PORT=15676; PROM_PORT=15696; NODE=rabbit43tls@localhost; DIST_PORT=25676; EPMD_PORT=4376
  MARK="$STATE_DIR/rabbitmq-$VERSION-tls.started-by-ladder"
  CONF=/etc/rabbitmq/rabbitmq-tls.conf
fi
if [ -n "$OWN" ]; then
  [ "$VERSION" = 4.3 ] || die "--own: only with --version 4.3"
  [ -z "$NOSTATS$TLS" ] || die "--own with --no-stats or --tls: one node at a time"
  AMQP_PORT=5677; API_PORT=15677; PROM_PORT=15697; NODE=rabbit43own@localhost; DIST_PORT=25677; EPMD_PORT=4377
  MARK="$STATE_DIR/rabbitmq-$VERSION-own.started-by-ladder"
  CONF=/etc/rabbitmq/rabbitmq-own.conf
fi
# The cluster's nodes, 1 to 3: cluster_node N makes node N the one the
# functions below (node_run, up_chroot, wait_for, stop_node…) act on. They
# share one epmd (so each finds the others' distribution ports), the
# chroot's Erlang cookie and its enabled_plugins; data and logs are per node
# name (/var/lib/rabbitmq/mnesia/NODE, /var/log/rabbitmq/NODE.log).
CLUSTER_SIZE=3
CLUSTER_SEED=rabbit43c1@localhost
cluster_node() {
  NODE=rabbit43c$1@localhost
  AMQP_PORT=$((5680 + $1)); API_PORT=$((15680 + $1)); PROM_PORT=$((15780 + $1)); DIST_PORT=$((25680 + $1)); EPMD_PORT=4381
  MARK="$STATE_DIR/rabbitmq-4.3-c$1.started-by-ladder"
  CONF=/etc/rabbitmq/rabbitmq-c$1.conf
}
if [ -n "$CLUSTER" ]; then
  [ -z "$NOSTATS$TLS$OWN" ] || die "--cluster with --no-stats, --tls or --own: one kind of node at a time"
  if [ "$cmd" = ctl ]; then
    case "$CLUSTER_N" in
      1 | 2 | 3) cluster_node "$CLUSTER_N" ;;
      *) die "ctl --cluster needs the node: 1, 2 or 3 (got '$CLUSTER_N')" ;;
    esac
  else
    [ -z "$CLUSTER_N" ] || die "$cmd --cluster takes no node number (only ctl does)"
    cluster_node 1
  fi
fi

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

api_ok() {
  if [ -n "$TLS" ] && command -v curl >/dev/null 2>&1; then
    curl -fsS -m 3 -u guest:guest --cacert "$ROOT$TLS_DIR/ca.pem" "https://127.0.0.1:$API_PORT/api/overview" >/dev/null 2>&1
  elif command -v curl >/dev/null 2>&1; then
    curl -fsS -m 3 -u guest:guest "http://127.0.0.1:$API_PORT/api/overview" >/dev/null 2>&1
  else
    port_open "$API_PORT"
  fi
}

need_root() {
  [ "$(id -u)" = 0 ] || die "$1 needs root (run as root or with sudo)"
}

apt_install() {
  need_root "installing $*"
  command -v apt-get >/dev/null 2>&1 || die "$* missing and this is not a Debian-like system (no apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  # Bounded: a mirror that stops answering must not hang make test.
  timeout "${APT_TIMEOUT:-600}" apt-get update -qq >/dev/null || die "apt-get update failed or took over ${APT_TIMEOUT:-600} s"
  # policy-rc.d may forbid starting services during install; we start them ourselves.
  timeout "${APT_TIMEOUT:-600}" apt-get install -y -qq --no-install-recommends "$@" >/dev/null ||
    die "apt-get install $* failed or took over ${APT_TIMEOUT:-600} s"
}

# node_run runs a command as the broker of $VERSION sees it.
node_run() {
  if [ "$VERSION" = 3.10 ]; then
    "$@"
  else
    # 9>&-: a node started here must not keep this script's lock (see lock).
    chroot "$ROOT" env HOME=/var/lib/rabbitmq RABBITMQ_NODENAME="$NODE" RABBITMQ_DIST_PORT="$DIST_PORT" ERL_EPMD_PORT="$EPMD_PORT" RABBITMQ_CONFIG_FILE="$CONF" "$@" 9>&-
  fi
}

enable_plugins() {
  local mode=("$@") missing=() enabled
  enabled=$(node_run rabbitmq-plugins list -E -m "${mode[@]}" 2>/dev/null || true)
  for p in "${PLUGINS[@]}"; do
    grep -qx "$p" <<<"$enabled" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "enabling ${missing[*]}"
  node_run rabbitmq-plugins enable "${mode[@]}" "${missing[@]}" >/dev/null || die "rabbitmq-plugins enable ${missing[*]} failed"
}

# enable_online starts the plugins on a running node: enabled_plugins may
# list them (an offline enable) while the node has not started them.
enable_online() {
  say "the management API does not answer on $API_PORT: enabling the plugins on the running node"
  node_run rabbitmq-plugins enable "${PLUGINS[@]}" >/dev/null 2>&1 || say "rabbitmq-plugins enable failed; waiting to see whether the API comes up"
}

wait_for() {
  local deadline=$((SECONDS + WAIT_SECONDS)) logs=/var/log/rabbitmq/ enabled=
  [ "$VERSION" != 3.10 ] && logs="$ROOT/var/log/rabbitmq/"
  until port_open "$AMQP_PORT"; do
    [ $SECONDS -lt $deadline ] || die "AMQP did not come up on 127.0.0.1:$AMQP_PORT within ${WAIT_SECONDS}s (see $logs)"
    sleep 1
  done
  until api_ok; do
    if [ -z "$enabled" ] && [ $SECONDS -gt $((deadline - WAIT_SECONDS + 10)) ]; then
      enable_online
      enabled=1
    fi
    [ $SECONDS -lt $deadline ] || die "the management API did not come up on 127.0.0.1:$API_PORT within ${WAIT_SECONDS}s (see $logs)"
    sleep 1
  done
}

up_system() {
  local pkg
  pkg=$(dpkg-query -W -f='${Version}' rabbitmq-server 2>/dev/null || true)
  case "$pkg" in
    "" | 3.10.*) ;;
    *) say "warning: the system's rabbitmq-server is $pkg, not 3.10: the 3.10 round runs on what is installed" ;;
  esac
  if port_open "$AMQP_PORT" && [ "$(id -u)" != 0 ]; then
    # Not root: rabbitmq-plugins cannot run; a broker whose API answers will do.
    api_ok || die "RabbitMQ answers on $AMQP_PORT but its management API does not, and enabling plugins needs root"
  elif port_open "$AMQP_PORT"; then
    enable_plugins
    api_ok || enable_online
  else
    command -v rabbitmq-server >/dev/null 2>&1 || { say "installing Debian's rabbitmq-server"; apt_install rabbitmq-server curl; }
    need_root "starting rabbitmq-server"
    enable_plugins --offline
    # The package's postinst may have started it already (where an init
    # system runs); starting a second node would fail.
    if port_open "$AMQP_PORT"; then
      enable_plugins
    else
      say "starting rabbitmq-server"
      # Debian's wrapper drops to the rabbitmq user; a failure here is
      # reported by the bounded wait below, with the logs to read.
      rabbitmq-server -detached >/dev/null 2>&1 || say "rabbitmq-server -detached returned an error; waiting to see whether the node came up"
      mkdir -p "$STATE_DIR" && touch "$MARK"
    fi
  fi
}

# bootstrap makes the chroot once: Debian $SUITE with its rabbitmq-server.
bootstrap() {
  [ -x "$ROOT/usr/sbin/rabbitmq-server" ] && return 0
  need_root "bootstrapping RabbitMQ $VERSION"
  command -v debootstrap >/dev/null 2>&1 || apt_install debootstrap
  local tmp="$ROOT.partial"
  rm -rf "$tmp"
  mkdir -p "$(dirname "$ROOT")"
  say "bootstrapping Debian $SUITE with rabbitmq-server into $ROOT (once: about 30 s and 400 MB)"
  timeout "${BOOTSTRAP_TIMEOUT:-900}" debootstrap --variant=minbase --include=rabbitmq-server "$SUITE" "$tmp" >"$STATE_DIR/debootstrap-$VERSION.log" 2>&1 ||
    die "debootstrap $SUITE failed or took over ${BOOTSTRAP_TIMEOUT:-900} s (see $STATE_DIR/debootstrap-$VERSION.log)"
  rm -rf "$ROOT"
  mv "$tmp" "$ROOT"
}

# same_certs: the TLS node's certificates in the chroot are CERTDIR's.
same_certs() {
  local f
  for f in "${TLS_FILES[@]}"; do
    cmp -s "$CERTDIR/$f" "$ROOT$TLS_DIR/$f" || return 1
  done
}

# install_certs copies CERTDIR into the chroot, readable by its rabbitmq
# user only (the key) or by all (the certificates).
install_certs() {
  mkdir -p "$ROOT$TLS_DIR"
  install -m 0644 "$CERTDIR/ca.pem" "$CERTDIR/server.pem" "$ROOT$TLS_DIR/"
  install -m 0600 "$CERTDIR/server-key.pem" "$ROOT$TLS_DIR/"
  chroot "$ROOT" chown -R rabbitmq:rabbitmq "$TLS_DIR" || die "chown rabbitmq $TLS_DIR in $ROOT failed"
}

# stop_node stops this script's node of the chroot and its epmd. Waits
# (bounded) for the node to leave epmd: rabbitmqctl stop returns before,
# and epmd -kill refuses while a node is registered.
stop_node() {
  local deadline=$((SECONDS + WAIT_SECONDS))
  node_run rabbitmqctl -n "$NODE" stop >/dev/null 2>&1 || true
  while node_run epmd -port "$EPMD_PORT" -names 2>/dev/null | grep -q "^name ${NODE%@*} " || port_open "$AMQP_PORT"; do
    [ $SECONDS -lt $deadline ] || die "$NODE still runs ${WAIT_SECONDS}s after rabbitmqctl stop (see $ROOT/var/log/rabbitmq/)"
    sleep 1
  done
  node_run epmd -port "$EPMD_PORT" -kill >/dev/null 2>&1 || true
}

up_chroot() {
  if port_open "$AMQP_PORT" && [ -n "$TLS" ]; then
    if same_certs; then
      api_ok || enable_online
      return 0
    fi
    [ -f "$MARK" ] || die "something answers on $AMQP_PORT that this script did not start: not replacing it"
    say "the TLS node runs with other certificates: restarting it with $CERTDIR's"
    stop_node
  elif port_open "$AMQP_PORT"; then
    api_ok || enable_online
    return 0
  fi
  bootstrap
  need_root "starting RabbitMQ $VERSION"
  cp /etc/hosts "$ROOT/etc/hosts" # else: epmd error for host localhost: nxdomain
  # From here down cleans up (the mounts too), whatever fails next.
  mkdir -p "$STATE_DIR" && touch "$MARK"
  mountpoint -q "$ROOT/proc" || mount -t proc proc "$ROOT/proc"
  mountpoint -q "$ROOT/dev" || mount --bind /dev "$ROOT/dev"
  mkdir -p "$ROOT/etc/rabbitmq"
  if [ -n "$TLS" ]; then
    install_certs
    cat >"$ROOT$CONF" <<EOF
listeners.tcp = none
listeners.ssl.default = 127.0.0.1:$AMQP_PORT
ssl_options.cacertfile = $TLS_DIR/ca.pem
ssl_options.certfile = $TLS_DIR/server.pem
ssl_options.keyfile = $TLS_DIR/server-key.pem
ssl_options.verify = verify_none
ssl_options.fail_if_no_peer_cert = false
management.ssl.ip = 127.0.0.1
management.ssl.port = $API_PORT
management.ssl.cacertfile = $TLS_DIR/ca.pem
management.ssl.certfile = $TLS_DIR/server.pem
management.ssl.keyfile = $TLS_DIR/server-key.pem
prometheus.tcp.ip = 127.0.0.1
prometheus.tcp.port = $PROM_PORT
EOF
  else
    cat >"$ROOT$CONF" <<EOF
listeners.tcp.default = 127.0.0.1:$AMQP_PORT
management.tcp.ip = 127.0.0.1
management.tcp.port = $API_PORT
prometheus.tcp.port = $PROM_PORT
EOF
  fi
  if [ -n "$CLUSTER" ]; then
    echo 'prometheus.tcp.ip = 127.0.0.1' >>"$ROOT$CONF"
  fi
  if [ -n "$OWN" ]; then
    # What the fault tests restore after lowering it (ctl -- set_vm_memory_high_watermark).
    echo 'vm_memory_high_watermark.relative = 0.4' >>"$ROOT$CONF"
  fi
  if [ -n "$NOSTATS" ]; then
    printf '%s\n' 'management.disable_stats = true' 'management.enable_queue_totals = true' 'management_agent.disable_metrics_collector = true' >>"$ROOT$CONF"
  fi
  enable_plugins --offline
  local pkg
  pkg=$(node_run dpkg-query -W -f='${Version}' rabbitmq-server 2>/dev/null || echo '?')
  case "$pkg" in
    "$VERSION".*) ;;
    *) say "warning: Debian $SUITE now ships rabbitmq-server $pkg, not $VERSION: tests run on what it ships" ;;
  esac
  say "starting RabbitMQ $VERSION ($pkg)${CLUSTER:+ as $NODE}"
  node_run rabbitmq-server -detached >/dev/null 2>&1 || say "rabbitmq-server -detached returned an error; waiting to see whether the node came up"
}

# unmount_chroot releases the chroot's /proc and /dev (a /dev left bound
# would make removing the state dir remove the host's device nodes).
unmount_chroot() {
  local m i p
  # Seven 4.3 nodes (with and without stats, TLS, own, the cluster's
  # three) share one chroot. The cluster's are seen by their distribution
  # ports, open while the VM runs even with its app stopped (stop_app).
  for p in 5673 5675 5676 5677 25681 25682 25683; do
    [ "$VERSION" = 4.3 ] && [ "$p" != "$AMQP_PORT" ] && port_open "$p" && return 0
  done
  for m in "$ROOT/dev" "$ROOT/proc"; do
    for i in 1 2 3 4 5; do
      mountpoint -q "$m" || break
      umount "$m" 2>/dev/null || sleep 1
    done
    if mountpoint -q "$m"; then
      umount -l "$m" 2>/dev/null || say "could not unmount $m: unmount it before removing $STATE_DIR"
    fi
  done
}

# node_registered: node $NODE's Erlang VM runs (registered with its epmd),
# whether or not its RabbitMQ app does.
node_registered() {
  node_run epmd -port "$EPMD_PORT" -names 2>/dev/null | grep -q "^name ${NODE%@*} "
}

# node_ctl runs rabbitmqctl against $NODE, bounded, saying what failed.
node_ctl() {
  local out
  out=$(node_run timeout "$WAIT_SECONDS" rabbitmqctl -n "$NODE" "$@" 2>&1) ||
    die "rabbitmqctl -n $NODE $* failed: $out (see $ROOT/var/log/rabbitmq/$NODE.log)"
}

# cluster_nodes_json is GET /api/nodes (name, running) on node $1's API.
cluster_nodes_json() {
  curl -fsS -m 5 -u guest:guest "http://127.0.0.1:$((15680 + $1))/api/nodes?columns=name,running" 2>/dev/null
}

# cluster_lists: node $1's /api/nodes names node $2 (as running when $3 is
# "running").
cluster_lists() {
  local rec
  rec=$(cluster_nodes_json "$1" | tr '}' '\n' | grep "\"rabbit43c$2@localhost\"") || return 1
  [ "${3:-}" != running ] || grep -q '"running":true' <<<"$rec"
}

# cluster_all_running: node $1's API lists every node as running.
cluster_all_running() {
  local j
  for j in $(seq "$CLUSTER_SIZE"); do
    cluster_lists "$1" "$j" running || return 1
  done
}

up_cluster() {
  local i pids=() rc=0 deadline seen mine
  # Start all before waiting for any: a node of a cluster that was stopped
  # whole may wait at boot for a majority of its peers (Khepri).
  # up_chroot (bootstrap, mounts, config, rabbitmq-server -detached) runs
  # one node at a time and does not wait; start_app waits, so in the
  # background.
  for i in $(seq "$CLUSTER_SIZE"); do
    cluster_node "$i"
    port_open "$AMQP_PORT" && continue
    if node_registered; then
      say "$NODE runs with its app stopped: start_app"
      node_ctl start_app &
      pids+=($!)
    else
      up_chroot
    fi
  done
  for i in "${pids[@]}"; do wait "$i" || rc=1; done
  [ $rc = 0 ] || die "start_app failed (see above and $ROOT/var/log/rabbitmq/)"
  for i in $(seq "$CLUSTER_SIZE"); do
    cluster_node "$i"
    wait_for
  done
  # Join to the seed (node 1) each node that neither lists the other: a
  # fresh node (a node that was a member rejoins by itself when it starts).
  # join_cluster resets the node, so only on two clear answers.
  seen=$(cluster_nodes_json 1) || die "$CLUSTER_SEED: GET /api/nodes failed, cannot tell its members (see $ROOT/var/log/rabbitmq/)"
  for i in $(seq 2 "$CLUSTER_SIZE"); do
    grep -q "\"rabbit43c$i@localhost\"" <<<"$seen" && continue
    mine=$(cluster_nodes_json "$i") || die "rabbit43c$i@localhost: GET /api/nodes failed, cannot tell its cluster (see $ROOT/var/log/rabbitmq/)"
    grep -q "\"$CLUSTER_SEED\"" <<<"$mine" && continue
    cluster_node "$i"
    say "joining $NODE to $CLUSTER_SEED"
    node_ctl stop_app
    node_ctl join_cluster "$CLUSTER_SEED"
    node_ctl start_app
  done
  deadline=$((SECONDS + WAIT_SECONDS))
  for i in $(seq "$CLUSTER_SIZE"); do
    cluster_node "$i"
    # Every node's API answers and lists all as running members.
    until api_ok && cluster_all_running "$i"; do
      [ $SECONDS -lt $deadline ] || die "$NODE does not list all ${CLUSTER_SIZE} nodes as running within ${WAIT_SECONDS}s: $(cluster_nodes_json "$i") (see $ROOT/var/log/rabbitmq/ and rabbitmq.sh ctl --cluster $i -- cluster_status; nodes whose data disagree on the cluster: down --cluster, remove $ROOT/var/lib/rabbitmq/mnesia/rabbit43c*, up --cluster)"
      sleep 1
    done
  done
  say "up: RabbitMQ 4.3 cluster of ${CLUSTER_SIZE} nodes (rabbit43c1..c${CLUSTER_SIZE}@localhost) on amqp://127.0.0.1:5681-$((5680 + CLUSTER_SIZE)), http://127.0.0.1:15681-$((15680 + CLUSTER_SIZE))"
}

down_cluster() {
  local i pids=() rc=0
  # At once: each stop waits on its own node (stop_node's bounded wait).
  for i in $(seq "$CLUSTER_SIZE"); do
    cluster_node "$i"
    if [ -f "$MARK" ]; then
      (stop_node && rm -f "$MARK") &
      pids+=($!)
    elif node_registered; then
      say "not stopping $NODE: this script did not start it"
    fi
  done
  for i in "${pids[@]}"; do wait "$i" || rc=1; done
  [ -d "$ROOT" ] && unmount_chroot
  [ $rc = 0 ] || die "stopping the cluster's nodes failed (see above)"
  [ ${#pids[@]} = 0 ] || say "stopped ${#pids[@]} node(s) of the RabbitMQ 4.3 cluster"
}

status_cluster() {
  local i
  for i in $(seq "$CLUSTER_SIZE"); do
    cluster_node "$i"
    status
  done
  say "cluster as node 1 sees it: $(cluster_nodes_json 1 || echo 'no answer')"
}

up() {
  if [ -n "$CLUSTER" ]; then
    up_cluster
    return
  fi
  if [ "$VERSION" = 3.10 ]; then up_system; else up_chroot; fi
  wait_for
  if [ -n "$TLS" ]; then
    say "up: RabbitMQ $VERSION (TLS) on amqps://127.0.0.1:$AMQP_PORT, https://127.0.0.1:$API_PORT"
  else
    say "up: RabbitMQ $VERSION${NOSTATS:+ (no stats)}${OWN:+ (own node)} on amqp://127.0.0.1:$AMQP_PORT, http://127.0.0.1:$API_PORT"
  fi
}

down() {
  if [ -n "$CLUSTER" ]; then
    down_cluster
    return
  fi
  if [ ! -f "$MARK" ]; then
    say "not stopping RabbitMQ $VERSION: this script did not start it"
    [ "$VERSION" != 3.10 ] && [ -d "$ROOT" ] && unmount_chroot
    return 0
  fi
  if [ "$VERSION" = 3.10 ]; then
    rabbitmqctl stop >/dev/null 2>&1 || true
  else
    stop_node
    unmount_chroot
  fi
  rm -f "$MARK"
  say "stopped RabbitMQ $VERSION${NOSTATS:+ (no stats)}${TLS:+ (TLS)}${OWN:+ (own node)}"
}

status() {
  local v=$VERSION${CLUSTER:+ $NODE}
  port_open "$AMQP_PORT" && say "$v: AMQP answers on $AMQP_PORT" || say "$v: AMQP does not answer on $AMQP_PORT"
  api_ok && say "$v: management API answers on $API_PORT" || say "$v: management API does not answer on $API_PORT"
}

# ctl runs rabbitmqctl against the node, bounded.
ctl() {
  [ ${#CTL_ARGS[@]} -gt 0 ] || die "ctl needs rabbitmqctl arguments after --"
  [ "$VERSION" = 3.10 ] || need_root "rabbitmqctl in the $VERSION chroot"
  node_run timeout "$WAIT_SECONDS" rabbitmqctl -n "$NODE" "${CTL_ARGS[@]}"
}

# lock serialises starting and stopping the nodes of one chroot (they
# share its /proc and /dev mounts: a down must not unmount them under an
# up that is starting another node).
lock() {
  [ "$VERSION" = 3.10 ] && return 0
  mkdir -p "$STATE_DIR"
  exec 9>"$STATE_DIR/rabbitmq-$VERSION.lock"
  flock -w "$WAIT_SECONDS" 9 || die "another rabbitmq.sh holds $STATE_DIR/rabbitmq-$VERSION.lock for more than ${WAIT_SECONDS}s"
}

case "$cmd" in
  up) lock; up ;;
  down) lock; down ;;
  status) if [ -n "$CLUSTER" ]; then status_cluster; else status; fi ;;
  ctl) ctl ;;
  *) echo "usage: $0 up|down|status|ctl [--version 3.10|4.0|4.3] [--no-stats | --tls [CERTDIR] | --own | --cluster [N]] [-- RABBITMQCTL-ARGS…]" >&2; exit 2 ;;
esac
