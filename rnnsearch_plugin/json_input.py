"""JSON that comes from outside (a request's body, a shared data folder's manifest), parsed so that
any text either gives its value or fails in one ``InvalidJSON`` saying why: Python's parser also
raises RecursionError on arrays or objects nested deeper than the recursion limit, and a bare
ValueError on an integer of more digits than it converts (``sys.get_int_max_str_digits()``)."""

import json
import sys
from typing import Any


class InvalidJSON(ValueError):
    """Text that is not JSON Python can read, with why in one line."""


def parse_json(text: str) -> Any:
    """The value of the JSON ``text``; InvalidJSON naming what is wrong with it."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidJSON(f"{error.msg} at line {error.lineno} column {error.colno}") from None
    except ValueError:  # the only other ValueError json.loads raises: an integer too long to convert
        raise InvalidJSON(f"an integer of more than {sys.get_int_max_str_digits():,} digits") from None
    except RecursionError:  # the parser recurses once per [ or {
        raise InvalidJSON(f"arrays or objects nested more than about {sys.getrecursionlimit():,} levels deep") from None
