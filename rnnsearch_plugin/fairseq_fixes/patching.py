"""How the plugin repairs fairseq: each repair replaces one attribute of fairseq (a function, or
the ``torch`` that ``checkpoint_utils`` reads) by a wrapper made from fairseq's own, once, however
often ``install`` runs (fairseq's commands, ``load``, a program that installs them too), and quiets
only the warnings about fairseq's code it names (``ignore_warnings``)."""

import warnings
from typing import Any, Callable

Function = Callable[..., Any]
# a warning known by the start of its message (a regex), its category and the module it is attributed to (a regex)
KnownWarning = tuple[str, type[Warning], str]


def wrap_once(owner: Any, name: str, wrapper: Callable[[Function], Function], static: bool = False) -> None:
    """Replace ``owner.name`` by ``wrapper(owner.name)`` unless ``wrapper`` already made it;
    ``static``: the attribute is a staticmethod of a class (fairseq's ``PathManager``). The
    replacement keeps fairseq's own as ``__wrapped__`` (tests/fairseq_fixes/test_bugs_on_pinned_fairseq.py
    runs it to show the bug each repair is for)."""
    current = getattr(owner, name)
    mark = f"{wrapper.__module__}.{wrapper.__qualname__}"
    if getattr(current, "wrapped_by", None) == mark:
        return
    wrapped = wrapper(current)
    wrapped.wrapped_by = mark  # type: ignore[attr-defined]
    wrapped.__wrapped__ = current  # type: ignore[attr-defined]
    setattr(owner, name, staticmethod(wrapped) if static else wrapped)


def ignore_warnings(known: tuple[KnownWarning, ...]) -> None:
    """Ignore exactly these warnings, each matched by message, category and module, after the user's
    own filters (``-W``, ``PYTHONWARNINGS``), which still decide; a filter already there is not added again."""
    for message, category, module in known:
        warnings.filterwarnings("ignore", message=message, category=category, module=module, append=True)
