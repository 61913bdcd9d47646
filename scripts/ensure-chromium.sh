#!/usr/bin/env bash
# Make sure headless Chromium and its driver exist for the browser tests: install Debian's packages when we may.
set -euo pipefail
[ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ] && exit 0

packages=(chromium chromium-driver)
if command -v apt-get >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "chromium or chromedriver is missing; installing ${packages[*]} with apt-get"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null
    exit 0
  fi
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    echo "chromium or chromedriver is missing; installing ${packages[*]} with sudo apt-get"
    sudo DEBIAN_FRONTEND=noninteractive apt-get update -qq
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null
    exit 0
  fi
fi
echo "The browser tests need /usr/bin/chromium and /usr/bin/chromedriver." >&2
echo "Install them, for example: sudo apt-get install chromium chromium-driver" >&2
exit 1
