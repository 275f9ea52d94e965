#!/usr/bin/env bash
# clients.sh — what the tests drive besides the broker: other ecosystems'
# AMQP clients for interop tests (messages they publish carry headers typed
# their way: python3-pika, php-amqplib, amqp-tools) and tmux for the test
# that drives the real binary. Installs Debian's packages when missing (as
# root); without root or apt it says so and those tests skip.
set -euo pipefail
need=()
/usr/bin/python3 -c 'import pika' 2>/dev/null || need+=(python3-pika)
{ command -v php >/dev/null && [ -f /usr/share/php/PhpAmqpLib/autoload.php ]; } || need+=(php-cli php-amqplib)
command -v amqp-publish >/dev/null || need+=(amqp-tools)
command -v tmux >/dev/null || need+=(tmux)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "clients.sh: missing ${need[*]} (needs root and apt-get); interop tests will skip" >&2
  exit 0
fi
echo "clients.sh: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1 ||
  { apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; }
