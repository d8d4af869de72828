#!/usr/bin/env bash
# Set up (or refresh) the Python environment of this repository, idempotently:
#   - the active virtual environment, or ./.venv (created if missing);
#   - torch: an installed one is left alone, else torch==2.13.0 (the release tested here);
#   - fairseq-fixed 0.12.3.1 (the `fairseq` module), built against that torch without build
#     isolation (an isolated build would download a second, multi-GB torch); pip caches the
#     built wheel, so only the first set-up on a machine compiles (~3-4 minutes);
#   - this plugin, non-editable, so `--user-dir rnnsearch_plugin` also works outside the repo, with
#     the extras EXTRAS names (default "test,results", setup.cfg: pytest, ruff, selenium; eflomal,
#     which compiles once; EXTRAS="" installs the plugin alone; the tutorial installs "results").
set -euo pipefail
cd "$(dirname "$0")/.."
# One set-up at a time per clone: the README's two commands, started together, would otherwise race
# to create .venv and install into it. The lock is this script itself, held until it exits.
exec 9<scripts/setup.sh
if command -v flock >/dev/null; then flock 9; fi  # macOS has no flock: one set-up at a time is then up to you
if [ -z "${VIRTUAL_ENV:-}" ]; then
  [ -x .venv/bin/python ] || "${PYTHON:-python3}" -m venv .venv
  # shellcheck disable=SC1091
  source .venv/bin/activate
fi
pip() { python -m pip --disable-pip-version-check -q "$@"; }
python -c "import torch" 2>/dev/null || pip install torch==2.13.0
python -c "import fairseq" 2>/dev/null || {
  pip install numpy cython setuptools wheel
  echo "| installing fairseq-fixed 0.12.3.1, built against torch $(python -c "import torch; print(torch.__version__)") (compiled once, then cached by pip)"
  pip install --no-build-isolation fairseq-fixed==0.12.3.1
}
rm -rf build  # setuptools' in-tree build folder: it would ship again the files of moved or deleted modules
EXTRAS=${EXTRAS-test,results}
pip install ".${EXTRAS:+[$EXTRAS]}"
python -c "import rnnsearch_plugin, torch, fairseq; print(f'| ready: torch {torch.__version__}, fairseq {fairseq.__version__}, {rnnsearch_plugin.__file__}')" 2>&1 | grep '^|'
