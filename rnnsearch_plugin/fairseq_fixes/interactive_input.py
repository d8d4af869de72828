"""fairseq-interactive serves every input line, whatever it holds (one output per line, in order).

fairseq's own reader and batching end the whole process on one bad line, losing the lines
after it. ``install`` (active only inside fairseq-interactive, run as the console command or as
``python -m fairseq_cli.interactive``) replaces two of its functions:

- ``buffered_read`` reads bytes and decodes each line on its own: a line that is not valid
  UTF-8 gets U+FFFD for its invalid bytes (unknown words to the model) and a warning naming
  the line, instead of a crash inside the BPE; a byte-order mark at the start of the input (as
  Windows Notepad writes it) is dropped, as the plugin's other readers drop it (``data/textio.py``),
  where fairseq would translate it as part of the first sentence;
- ``make_batches`` truncates a line longer than the model's source limit
  (``--max-source-positions``, counted in BPE tokens with the closing </s>) to its first
  tokens, with a warning, instead of fairseq's "Size of sample is invalid" error, and reads a
  blank line (no visible character: ``blank.py``) as the empty sentence, which has the empty
  translation.

The limit and its warning are the plugin's own (``truncation.py``), shared with the Python API and rnnsearch-serve.
Delete ``install`` once fairseq-interactive reads and truncates lines this way itself (0.12.x
ends the process).
"""

import functools
import logging
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any, Callable, Optional

from ..blank import is_blank
from ..data.textio import without_bom
from ..truncation import source_limit, warn_truncated
from .patching import wrap_once

logger = logging.getLogger(__name__)

MakeBatches = Callable[..., Iterator[Any]]


def read_lines(input: str, buffer_size: int) -> Iterator[list[str]]:
    """fairseq's ``buffered_read`` (stripped lines, ``buffer_size`` at a time) over bytes."""
    stream = sys.stdin.buffer if input == "-" else open(input, "rb")
    buffer: list[str] = []
    with stream:
        for number, raw in enumerate(stream, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                line = raw.decode("utf-8", errors="replace")
                logger.warning(f"input line {number} is not valid UTF-8; its invalid bytes are read as U+FFFD")
            buffer.append((without_bom(line) if number == 1 else line).strip())
            if len(buffer) >= buffer_size:
                yield buffer
                buffer = []
    if buffer:
        yield buffer


def reading_bytes(buffered_read: Callable[[str, int], Iterator[list[str]]]) -> Callable[[str, int], Iterator[list[str]]]:
    """``read_lines`` in place of fairseq's ``buffered_read``, which decodes the whole input at once."""
    return read_lines


def truncating_long_lines(make_batches: MakeBatches) -> MakeBatches:
    @functools.wraps(make_batches)
    def make_batches_within_limit(
        lines: list[str], cfg: Any, task: Any, max_positions: Any, encode_fn: Callable[[str], str]
    ) -> Iterator[Any]:
        limit = source_limit(max_positions)

        def encode_within_limit(line: str) -> str:
            if is_blank(line):
                return ""  # the empty sentence, whose translation is the empty one
            tokens = encode_fn(line).split()
            if limit is not None and len(tokens) + 1 > limit:  # + </s>
                warn_truncated(line, len(tokens) + 1, limit)
                tokens = tokens[: limit - 1]
            return " ".join(tokens)

        return make_batches(lines, cfg, task, max_positions, encode_within_limit)

    return make_batches_within_limit


def running_interactive() -> Optional[ModuleType]:
    """fairseq-interactive's module where it runs: imported by the console command, or run as
    ``__main__`` by ``python -m fairseq_cli.interactive``; None elsewhere."""
    main = sys.modules.get("__main__")
    if getattr(getattr(main, "__spec__", None), "name", None) == "fairseq_cli.interactive":
        return main
    return sys.modules.get("fairseq_cli.interactive")


def install() -> None:
    interactive = running_interactive()
    if interactive is None:
        return
    wrap_once(interactive, "buffered_read", reading_bytes)
    wrap_once(interactive, "make_batches", truncating_long_lines)
