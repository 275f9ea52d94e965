#!/usr/bin/env bash
# rabbitmq.sh up|down|status — a RabbitMQ with the plugins ladder's tests need,
# on 127.0.0.1:5672 (AMQP) and 127.0.0.1:15672 (management API), guest/guest.
# Idempotent: a broker that already answers is reused (its plugins enabled);
# otherwise Debian's rabbitmq-server is installed if missing and started.
set -euo pipefail

PLUGINS=(rabbitmq_management rabbitmq_shovel rabbitmq_shovel_management rabbitmq_prometheus)
AMQP_PORT=${LADDER_RABBITMQ_AMQP_PORT:-5672}
API_PORT=${LADDER_RABBITMQ_API_PORT:-15672}
WAIT_SECONDS=${LADDER_RABBITMQ_WAIT:-120}
STATE_DIR=${LADDER_STATE_DIR:-/var/tmp/ladder}
MARK="$STATE_DIR/rabbitmq.started-by-ladder"

say() { echo "rabbitmq.sh: $*" >&2; }
die() { say "$*"; exit 1; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

api_ok() {
  if command -v curl >/dev/null 2>&1; then
    curl -fsS -m 3 -u guest:guest "http://127.0.0.1:$API_PORT/api/overview" >/dev/null 2>&1
  else
    port_open "$API_PORT"
  fi
}

need_root() {
  [ "$(id -u)" = 0 ] || die "$1 needs root (run as root or with sudo)"
}

install_server() {
  command -v rabbitmq-server >/dev/null 2>&1 && return 0
  need_root "installing rabbitmq-server"
  command -v apt-get >/dev/null 2>&1 || die "rabbitmq-server is missing and this is not a Debian-like system (no apt-get)"
  say "installing Debian's rabbitmq-server"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null || die "apt-get update failed"
  # policy-rc.d may forbid starting services during install; we start it ourselves.
  apt-get install -y -qq --no-install-recommends rabbitmq-server curl >/dev/null || die "apt-get install rabbitmq-server failed"
}

enable_plugins() {
  local mode=("$@") missing=() enabled
  enabled=$(rabbitmq-plugins list -E -m "${mode[@]}" 2>/dev/null || true)
  for p in "${PLUGINS[@]}"; do
    grep -qx "$p" <<<"$enabled" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "enabling ${missing[*]}"
  rabbitmq-plugins enable "${mode[@]}" "${missing[@]}" >/dev/null || die "rabbitmq-plugins enable ${missing[*]} failed"
}

wait_for() {
  local deadline=$((SECONDS + WAIT_SECONDS))
  until port_open "$AMQP_PORT"; do
    [ $SECONDS -lt $deadline ] || die "AMQP did not come up on 127.0.0.1:$AMQP_PORT within ${WAIT_SECONDS}s (see /var/log/rabbitmq/)"
    sleep 1
  done
  until api_ok; do
    [ $SECONDS -lt $deadline ] || die "the management API did not come up on 127.0.0.1:$API_PORT within ${WAIT_SECONDS}s (is rabbitmq_management enabled? see /var/log/rabbitmq/)"
    sleep 1
  done
}

up() {
  if port_open "$AMQP_PORT"; then
    enable_plugins
  else
    install_server
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
  wait_for
  say "up: amqp://127.0.0.1:$AMQP_PORT, http://127.0.0.1:$API_PORT"
}

down() {
  if [ ! -f "$MARK" ]; then
    say "not stopping: this script did not start the running broker"
    return 0
  fi
  rabbitmqctl stop >/dev/null 2>&1 || true
  rm -f "$MARK"
  say "stopped"
}

status() {
  port_open "$AMQP_PORT" && say "AMQP answers on $AMQP_PORT" || say "AMQP does not answer on $AMQP_PORT"
  api_ok && say "management API answers on $API_PORT" || say "management API does not answer on $API_PORT"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  *) echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
