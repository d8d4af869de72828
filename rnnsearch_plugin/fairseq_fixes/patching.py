"""How the plugin repairs fairseq: each repair replaces one attribute of fairseq (a function, or
the ``torch`` that ``checkpoint_utils`` reads) by a wrapper made from fairseq's own, once, however
often ``install`` runs (fairseq imports ``--user-dir``, a program may import the package too)."""
from typing import Any, Callable

Function = Callable[..., Any]


def wrap_once(owner: Any, name: str, wrapper: Callable[[Function], Function], static: bool = False) -> None:
    """Replace ``owner.name`` by ``wrapper(owner.name)`` unless ``wrapper`` already made it;
    ``static``: the attribute is a staticmethod of a class (fairseq's ``PathManager``)."""
    current = getattr(owner, name)
    mark = f"{wrapper.__module__}.{wrapper.__qualname__}"
    if getattr(current, "wrapped_by", None) == mark:
        return
    wrapped = wrapper(current)
    wrapped.wrapped_by = mark  # type: ignore[attr-defined]
    setattr(owner, name, staticmethod(wrapped) if static else wrapped)
