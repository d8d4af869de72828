# Sourced by the scripts, and by users (`source scripts/activate.sh`): use the active virtual
# environment, or ./.venv made by setup.sh.
if [ -z "${VIRTUAL_ENV:-}" ] && [ -f "$(dirname "${BASH_SOURCE[0]}")/../.venv/bin/activate" ]; then
  # shellcheck disable=SC1091
  source "$(dirname "${BASH_SOURCE[0]}")/../.venv/bin/activate"
fi
# glibc returns every freed block over 32 MB (the B x T x vocabulary logits, log-probabilities
# and their gradients: 100-500 MB each) to the kernel, so each training step page-faults them
# back in, zero-filled. Keeping freed memory in the process instead made CPU training 1.14-1.21x
# faster for rnnsearch_small and 1.02-1.15x for fairseq's lstm, for 12-28% more peak memory
# (benchmarks/results.md, "Allocator", and changes.md).
# Values already set are left alone; `unset MALLOC_MMAP_THRESHOLD_ MALLOC_TRIM_THRESHOLD_` after
# sourcing restores glibc's defaults.
export MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_-4294967296}   # 4 GiB: larger blocks are mmapped
export MALLOC_TRIM_THRESHOLD_=${MALLOC_TRIM_THRESHOLD_-68719476736}  # 64 GiB: never shrink the heap
