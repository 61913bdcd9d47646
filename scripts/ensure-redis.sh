#!/usr/bin/env bash
# Make sure a redis-server binary exists: install it from the system packages when we may.
set -euo pipefail
command -v redis-server >/dev/null 2>&1 && exit 0

if command -v apt-get >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "redis-server is missing; installing it with apt-get"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
    exit 0
  fi
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    echo "redis-server is missing; installing it with sudo apt-get"
    sudo DEBIAN_FRONTEND=noninteractive apt-get update -qq
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
    exit 0
  fi
fi
echo "redis-server is not installed. Install it, for example: sudo apt-get install redis-server" >&2
echo "(or point REDIS_URL at a running Redis 7+ and run again)" >&2
exit 1
