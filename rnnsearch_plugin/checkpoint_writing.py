"""A checkpoint being written when the process dies never replaces the previous good one.

fairseq's ``save_checkpoint`` writes the first checkpoint of an update atomically (a ``.tmp``
file renamed over the old one) but then *copies* it onto the other names it keeps
(``checkpoint_last.pt``, ``checkpoint_best.pt``) with ``PathManager.copy``, which writes in
place: a run killed during that copy leaves a truncated ``checkpoint_last.pt``, and the
restarted run cannot resume from it. ``install`` makes those copies write a ``.tmp`` file next
to the target and rename it over the target (``os.replace``, atomic on POSIX file systems).
"""
import functools
import os
from typing import Callable

from fairseq import checkpoint_utils

Copy = Callable[..., bool]


def replacing_atomically(copy: Copy) -> Copy:
    """Wrap ``PathManager.copy`` so that a local target is either the old file or the new one."""

    @functools.wraps(copy)
    def copy_then_rename(src_path: str, dst_path: str, overwrite: bool = False) -> bool:
        if checkpoint_utils.PathManager.path_requires_pathmanager(dst_path):
            return copy(src_path, dst_path, overwrite)
        if os.path.exists(dst_path) and not overwrite:
            return False
        partial = f"{dst_path}.tmp"
        copy(src_path, partial, True)
        os.replace(partial, dst_path)
        return True

    copy_then_rename.replaces_atomically = True  # type: ignore[attr-defined]
    return copy_then_rename


def install() -> None:
    """Replace the ``PathManager.copy`` that ``checkpoint_utils`` uses (idempotent)."""
    manager = checkpoint_utils.PathManager
    if not getattr(manager.copy, "replaces_atomically", False):
        manager.copy = staticmethod(replacing_atomically(manager.copy))
