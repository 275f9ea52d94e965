#!/usr/bin/env bash
# clients.sh — what the tests drive besides the broker: other ecosystems'
# AMQP clients for interop tests (messages they publish carry headers typed
# their way: python3-pika, php-amqplib, amqp-tools), tmux for the tests that
# drive the real binary and OpenSSH's client for ladder serve's; promtool; the
# frameworks internal/conformance runs (Celery: python3-celery,
# python3-kombu; aio-pika's Master/Worker: python3-aio-pika; Sneakers'
# handler on ruby-bunny; rascal, Moleculer Channels, amqplib-retry and
# foo-foo-mq from npm, pinned by the package-lock.json of
# internal/conformance/testdata/rascal, .../moleculer, .../amqplibretry and
# .../foofoomq, installed there;
# Watermill's Go modules, pinned by testdata/watermill's go.sum). Installs
# Debian's packages when missing (as root); without root or apt it says so
# and those tests skip.
set -euo pipefail
cd "$(dirname "$0")/.."
# npm ci into a conformance test's directory (node_modules is git-ignored)
# unless its package (2nd argument) is there.
npm_ci() {
  local dir=internal/conformance/testdata/$1
  [ -d "$dir/node_modules/$2" ] && return 0
  if ! command -v npm >/dev/null; then
    echo "clients.sh: npm missing; the $1 conformance test will skip" >&2
    return 0
  fi
  echo "clients.sh: npm ci in $dir" >&2
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
}
# The libraries from registries: npm's, and the Go module proxy for the
# Watermill test's own module (not ladder's go.mod), built once so that
# the test's `go run` finds it in the build cache.
registries() {
  npm_ci rascal rascal
  npm_ci moleculer @moleculer/channels
  npm_ci amqplibretry amqplib-retry
  npm_ci foofoomq foo-foo-mq
  (cd internal/conformance/testdata/watermill && "${GO:-go}" build -o /dev/null .)
}
need=()
/usr/bin/python3 -c 'import pika' 2>/dev/null || need+=(python3-pika)
{ command -v php >/dev/null && [ -f /usr/share/php/PhpAmqpLib/autoload.php ]; } || need+=(php-cli php-amqplib)
command -v amqp-publish >/dev/null || need+=(amqp-tools)
command -v tmux >/dev/null || need+=(tmux)
command -v ssh >/dev/null || need+=(openssh-client)
/usr/bin/python3 -c 'import celery, kombu' 2>/dev/null || need+=(python3-celery python3-kombu)
/usr/bin/python3 -c 'import aio_pika.patterns' 2>/dev/null || need+=(python3-aio-pika)
{ command -v ruby >/dev/null && ruby -e "require 'bunny'" 2>/dev/null; } || need+=(ruby ruby-bunny)
command -v npm >/dev/null || need+=(npm)
# promtool (Debian ships it with prometheus): the alert rules' tests and
# the metrics test's check of a scrape.
command -v promtool >/dev/null || need+=(prometheus)
if [ ${#need[@]} -eq 0 ]; then registries; exit 0; fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "clients.sh: missing ${need[*]} (needs root and apt-get); interop tests will skip" >&2
  registries
  exit 0
fi
echo "clients.sh: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1 ||
  { apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; }
registries
