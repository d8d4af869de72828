"""fairseq-interactive prints ``--print-alignment soft`` as fairseq-generate does.

fairseq-interactive (0.12.x) prints every alignment as hard ``SRC-TGT`` pairs. A soft alignment
(each target token's weights over the source tokens, which fairseq-generate prints on its ``A-``
line as the rows, each row's weights joined by commas and the rows by spaces) ends it in
"ValueError: too many values to unpack", after the sentences before it were printed, or, for a
source of one token (rows of two weights: the token's and </s>'s), is printed as pairs, "0.2-0.8".

``install`` (active only inside fairseq-interactive, as ``interactive_input.running_interactive``
finds it) replaces its ``main`` by fairseq's own, recompiled from fairseq's source with that one
expression changed to fairseq-generate's, for the soft alignment only (``SOFT_OR_HARD``). The
file and line numbers stay fairseq's, so a traceback reads as before; the hard alignment's line
is unchanged. This also fixes fairseq's own models. Delete once fairseq-interactive prints a soft
alignment itself (0.12.x does not).
"""

import ast
import inspect
import types

from .interactive_input import running_interactive
from .patching import Function, wrap_once

# fairseq-interactive's A- line, for hard and soft alignments alike
HARD = '["{}-{}".format(src, tgt) for src, tgt in alignment]'
# fairseq-generate's: a soft alignment's rows of weights, joined by commas; a hard one's pairs as before
SOFT_OR_HARD = f'([",".join(weights) for weights in alignment] if cfg.generation.print_alignment == "soft" else {HARD})'


def printing_soft_alignments(main: Function) -> Function:
    """fairseq-interactive's ``main`` recompiled from its source, ``SOFT_OR_HARD`` in place of ``HARD``,
    with the same globals (the replaced ``buffered_read`` and ``make_batches`` among them)."""
    lines, first = inspect.getsourcelines(main)
    source = "".join(lines)
    if source.count(HARD) != 1:
        raise RuntimeError(f"fairseq-interactive's main no longer prints alignments as fairseq 0.12.x does: delete {__name__}")
    tree = ast.parse(source.replace(HARD, SOFT_OR_HARD))
    ast.increment_lineno(tree, first - 1)
    module = compile(tree, main.__code__.co_filename, "exec")
    code = next(constant for constant in module.co_consts if inspect.iscode(constant) and constant.co_name == main.__name__)
    return types.FunctionType(code, main.__globals__, main.__name__, main.__defaults__, main.__closure__)


def install() -> None:
    interactive = running_interactive()
    if interactive is not None:
        wrap_once(interactive, "main", printing_soft_alignments)
