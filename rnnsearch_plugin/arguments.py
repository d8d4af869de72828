"""The checks of what a caller asks of a model (a beam size, an n-best, a sentence), shared by the
Python API (``hub.py``), which raises their errors, and rnnsearch-serve (``serve/requests.py``),
which answers them with an HTTP status: a TypeError for a value of the wrong type, a ValueError for
one out of range, each one line naming the argument, so that both refuse the same values alike."""

import json
from typing import Any, Optional

SHOWN = 40  # characters of a refused value that a message quotes


def shown(value: Any) -> str:
    """A refused value as a message quotes it: its JSON (its repr where JSON has none), cut short."""
    try:
        quoted = json.dumps(value, default=repr)
    except ValueError:  # an integer of more digits than Python converts to text, or a list that holds itself
        return f"a {type(value).__name__} too large to show"
    return quoted if len(quoted) <= SHOWN else quoted[:SHOWN] + "..."


def integer(value: Any, name: str, low: int, high: Optional[int] = None) -> int:
    """``value``, an integer from ``low`` to ``high`` (no limit: None)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name!r} must be an integer, got {shown(value)}")
    if value < low or (high is not None and value > high):
        bounds = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ValueError(f"{name!r} is {shown(value)}: it must be {bounds}")
    return value


def text(value: Any, what: str) -> str:
    """``value``, a string that is valid Unicode: one holding a lone surrogate ("\\ud800") cannot be
    encoded (as UTF-8, or by the tokeniser and the subword model)."""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a string, got {shown(value)}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{what} holds a lone surrogate (\\ud800-\\udfff): send valid Unicode") from None
    return value


def fraction(value: Any, name: str) -> float:
    """``value``, a number from 0 to 1 (a weight threshold)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise TypeError(f"{name!r} must be a number, got {shown(value)}")
    if not 0 <= value <= 1:
        raise ValueError(f"{name!r} is {shown(value)}: it must be between 0 and 1")
    return value
