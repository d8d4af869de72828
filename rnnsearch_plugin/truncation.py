"""A sentence longer than the model's source limit (``--max-source-positions``, counted in subword
tokens with the closing </s>) is translated from its first tokens, with a warning naming it:
fairseq-interactive (``fairseq_fixes/interactive_input.py``), the Python API (``hub.py``) and
rnnsearch-serve (which refuses a --max-sentence-tokens above the limit) all read it here.
"""

import logging
from typing import Any, Optional

logger = logging.getLogger(__name__)


def source_limit(max_positions: Any) -> Optional[int]:
    """The source side of fairseq's resolved max_positions (an int or a (source, target) pair)."""
    return max_positions[0] if isinstance(max_positions, tuple) else max_positions


def warn_truncated(line: str, length: int, limit: int) -> None:
    logger.warning(
        f"a source line of {length} tokens ({line[:30]!r}...) is longer than "
        f"--max-source-positions {limit}; translating its first {limit - 1} tokens"
    )
