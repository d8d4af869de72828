"""A checkpoint being written when the process dies never replaces the previous good one.

fairseq's ``save_checkpoint`` writes the first checkpoint of an update atomically (a ``.tmp``
file renamed over the old one, ``torch_persistent_save``) but then *copies* it onto the other
names it keeps (``checkpoint_last.pt``, ``checkpoint_best.pt``) with ``PathManager.copy``,
which writes in place: a run killed during that copy leaves a truncated ``checkpoint_last.pt``,
and the restarted run cannot resume from it. Neither path calls fsync, so after a power failure
a renamed checkpoint can also come back empty or partial (the rename reached the disk before
the data). ``install`` makes, for local files:

- those copies write a ``.tmp`` file next to the target and rename it over the target
  (``os.replace``, atomic on POSIX file systems), removing the ``.tmp`` if the copy fails;
- both the copies and fairseq's own rename fsync the new file before the rename and its
  folder after it (``PathManager.rename`` serves only ``torch_persistent_save``);
- ``fairseq-train`` remove, when it starts, the ``*.pt.tmp`` files that a killed run left in
  ``--save-dir`` (rank 0 only, before anything is saved).

The guarantee: every checkpoint name holds either its previous content or the complete new
file, whenever the process is killed (kill-safe), and also after a power failure on file
systems that honour fsync. Delete this module once fairseq copies and renames this way itself.
"""

import functools
import logging
import os
from pathlib import Path
from typing import Any, Callable

from fairseq import checkpoint_utils

from .patching import wrap_once

logger = logging.getLogger(__name__)
Copy = Callable[..., bool]
Rename = Callable[[str, str], None]
TEMPORARY_SUFFIX = ".tmp"  # the suffix torch_persistent_save uses too


def fsync_path(path: str) -> None:
    """Flush a file's data, or a folder's entries, to the disk."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def durable_replace(partial: str, target: str) -> None:
    """Rename ``partial`` over ``target`` with its data on the disk first and the rename after."""
    fsync_path(partial)
    os.replace(partial, target)
    fsync_path(os.path.dirname(os.path.abspath(target)))


def replacing_atomically(copy: Copy) -> Copy:
    """Wrap ``PathManager.copy`` so that a local target is either the old file or the new one."""

    @functools.wraps(copy)
    def copy_then_rename(src_path: str, dst_path: str, overwrite: bool = False) -> bool:
        if checkpoint_utils.PathManager.path_requires_pathmanager(dst_path):
            return copy(src_path, dst_path, overwrite)
        if os.path.exists(dst_path) and not overwrite:
            return False
        partial = dst_path + TEMPORARY_SUFFIX
        try:
            copy(src_path, partial, True)
            durable_replace(partial, dst_path)
        except BaseException:
            Path(partial).unlink(missing_ok=True)
            raise
        return True

    return copy_then_rename


def syncing(rename: Rename) -> Rename:
    """Wrap ``PathManager.rename`` (fairseq's ``.tmp`` -> checkpoint) to fsync around it."""

    @functools.wraps(rename)
    def rename_durably(src: str, dst: str) -> None:
        if checkpoint_utils.PathManager.path_requires_pathmanager(dst):
            return rename(src, dst)
        return durable_replace(src, dst)

    return rename_durably


def remove_stale_temporaries(save_dir: str) -> list[Path]:
    """Delete the ``*.pt.tmp`` files in ``save_dir`` (left by a run killed while writing)."""
    stale = sorted(Path(save_dir).glob(f"*.pt{TEMPORARY_SUFFIX}")) if os.path.isdir(save_dir) else []
    for path in stale:
        path.unlink(missing_ok=True)
        logger.info(f"removed {path}, left by a run stopped while writing it")
    return stale


def sweeping_stale_temporaries(load_checkpoint: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap ``checkpoint_utils.load_checkpoint`` (fairseq-train's start) to remove them first."""

    @functools.wraps(load_checkpoint)
    def sweep_then_load(cfg: Any, trainer: Any, **passthrough_args: Any) -> Any:
        local = not checkpoint_utils.PathManager.path_requires_pathmanager(cfg.save_dir)
        if local and trainer.is_data_parallel_master:
            remove_stale_temporaries(cfg.save_dir)
        return load_checkpoint(cfg, trainer, **passthrough_args)

    return sweep_then_load


def install() -> None:
    """Wrap ``PathManager.copy`` and ``.rename`` and ``checkpoint_utils.load_checkpoint``."""
    wrap_once(checkpoint_utils.PathManager, "copy", replacing_atomically, static=True)
    wrap_once(checkpoint_utils.PathManager, "rename", syncing, static=True)
    wrap_once(checkpoint_utils, "load_checkpoint", sweeping_stale_temporaries)
