#!/usr/bin/env bash
# Set up, then run the whole test suite (the README gives its time on 2 cores; run it after the quickstart,
# not beside it). The page's tests drive headless Chromium, and the heatmap's font tests need the
# Noto fonts: where these are missing and this user may install Debian's packages (root, or sudo
# without a password), they are installed first (scripts/install_browser.sh, scripts/install_fonts.sh).
# The run ends by naming each skipped test and what enables it.
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ "$(id -u)" -eq 0 ] || sudo -n true 2>/dev/null; then
  if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    bash scripts/install_browser.sh || echo "| could not install headless Chromium: the page's tests will skip"
  fi
  bash scripts/install_fonts.sh || echo "| could not install the Noto fonts: the heatmap's font tests will skip"
fi
source scripts/activate.sh
# one worker per core (pytest-xdist), each test file on one worker, one compute thread each: two
# processes of two threads would thrash on two cores
OMP_NUM_THREADS=1 python -m pytest -p no:cacheprovider -n auto --dist loadfile "$@"
