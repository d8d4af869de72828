#!/usr/bin/env bash
# The GPU check (tooling/gpu_check.py says what it runs): on the GPU machine, after
# tooling/gpu_wheels.sh here and with .gpu_wheels carried,
#   bash tooling/gpu_check.sh [--device cuda|cpu] [--out PREFIX]
# writes PREFIX.md, PREFIX.json and PREFIX.log and exits 1 if any check failed.
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-python3}" tooling/gpu_check.py "$@"
