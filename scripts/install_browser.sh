#!/usr/bin/env bash
# Headless Chromium and its WebDriver from Debian's packages, for the tests of rnnsearch-serve's
# page (tests/serve/test_serve.py skips them, saying why, where these are missing) and docs/serve.md's
# screenshot. Run as root (or through sudo); about 300 MB.
set -euo pipefail
if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
  echo "| chromium and chromedriver are installed: $(chromium --version 2>/dev/null)"
  exit 0
fi
SUDO=$([ "$(id -u)" -eq 0 ] && echo "" || echo sudo)
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y chromium chromium-driver
echo "| installed: $(chromium --version 2>/dev/null)"
