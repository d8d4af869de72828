#!/usr/bin/env bash
# Set up, then run the whole test suite (about 15 minutes on 2 cores; run it after the quickstart,
# not beside it). The page's tests drive headless Chromium: where it is missing and this user may
# install Debian's packages (root, or sudo without a password), it is installed first
# (scripts/install_browser.sh). The run ends by naming each skipped test and what enables it.
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  if [ "$(id -u)" -eq 0 ] || sudo -n true 2>/dev/null; then
    bash scripts/install_browser.sh || echo "| could not install headless Chromium: the page's tests will skip"
  fi
fi
source scripts/activate.sh
python -m pytest -p no:cacheprovider "$@"
