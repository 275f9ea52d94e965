#!/bin/sh
# deb/rpm post-install: the service's user and directories; the service
# itself stays disabled until someone enables it.
set -e
if ! getent passwd ladder >/dev/null; then
  useradd --system --home-dir /var/lib/ladder --no-create-home --shell /usr/sbin/nologin ladder 2>/dev/null \
    || adduser --system --home /var/lib/ladder --no-create-home --shell /usr/sbin/nologin --group ladder
fi
install -d -m 0750 -o root -g ladder /etc/ladder
install -d -m 0700 -o ladder -g ladder /var/lib/ladder
install -d -m 0750 -o ladder -g ladder /var/log/ladder
if command -v systemctl >/dev/null 2>&1; then systemctl daemon-reload || true; fi
