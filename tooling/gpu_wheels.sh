#!/usr/bin/env bash
# Download into .gpu_wheels/ (ignored by git) what the GPU machine lacks to run
# tooling/gpu_check.sh: it has Python 3.12 (manylinux x86_64), torch 2.11+cu130 and most of the
# scientific stack, but no network, no fairseq and none of the packages below. Run here, on a
# machine with the registry, then carry .gpu_wheels/ with the tree; gpu_check.sh installs from it.
#   - fairseq-fixed's source distribution (gpu_check.sh builds it there against the torch it finds);
#   - the wheels fairseq and this plugin need that the machine lacks, for CPython 3.12;
#   - antlr4-python3-runtime 4.9.3 (omegaconf's pin) is published only as source: built here into
#     a pure-Python wheel.
# The versions are those scripts/setup.sh installs here. Idempotent: a file already there is kept,
# and files of other versions are removed, so the folder holds one version of each (about 14 MB).
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=.gpu_wheels
# fairseq-fixed's metadata is prepared by running its setup.py, which imports torch: this
# repository's environment (scripts/setup.sh) has one.
PYTHON=${PYTHON:-.venv/bin/python}
[ -x "$PYTHON" ] || { echo "gpu_wheels.sh: error: no $PYTHON: run 'bash scripts/setup.sh' first (or set PYTHON)" >&2; exit 1; }
FAIRSEQ=fairseq-fixed==0.12.3.1
BINARY=(cffi==2.1.1 bitarray==3.12.3)  # compiled: CPython 3.12 manylinux wheels
PURE=(pycparser==3.12 hydra-core==1.3.2 omegaconf==2.3.0 sacremoses==0.2.0 subword-nmt==0.3.8 mock==5.2.0
      starlette==1.10.0 uvicorn==0.55.0 tensorboardX==2.6.5)
SOURCE_ONLY=antlr4-python3-runtime==4.9.3
pip() { "$PYTHON" -m pip --disable-pip-version-check -q "$@"; }
mkdir -p "$DEST"
pip download --no-deps --no-binary :all: --no-build-isolation -d "$DEST" "$FAIRSEQ"
pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp --abi cp312 \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d "$DEST" "${BINARY[@]}"
pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp --abi none \
  --platform any -d "$DEST" "${PURE[@]}"
pip wheel --no-deps --no-build-isolation -w "$DEST" "$SOURCE_ONLY"
# One version of each: remove what the pins above no longer name.
"$PYTHON" - "$DEST" "$FAIRSEQ" "${BINARY[@]}" "${PURE[@]}" "$SOURCE_ONLY" <<'PY'
import re, sys
from pathlib import Path

folder, pins = Path(sys.argv[1]), sys.argv[2:]
wanted = {(re.sub(r"[-_.]+", "_", name).lower(), version) for name, version in (pin.split("==") for pin in pins)}
for path in folder.iterdir():
    name, version = re.match(r"(.+?)-(\d[^-]*?)(?:\.tar\.gz|-.*\.whl)$", path.name).groups()
    if (re.sub(r"[-_.]+", "_", name).lower(), version) not in wanted:
        path.unlink()
        print(f"| removed {path.name} (not pinned)")
PY
echo "| $DEST: $(ls "$DEST" | wc -l) files, $(du -sh "$DEST" | cut -f1)"
