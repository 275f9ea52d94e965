#!/bin/sh
# deb/rpm pre-remove: stop the service if it runs (its state and the audit
# log stay).
set -e
if command -v systemctl >/dev/null 2>&1; then
  systemctl stop ladder-serve.service 2>/dev/null || true
  systemctl disable ladder-serve.service 2>/dev/null || true
fi
