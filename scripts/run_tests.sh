#!/usr/bin/env bash
# Set up, then run the test suite (247 tests, about 10 minutes on 2 cores). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/activate.sh
python -m pytest -p no:cacheprovider "$@"
