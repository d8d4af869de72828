"""fairseq-interactive serves every line it is given (``fairseq_fixes/interactive_input.py``)."""

import re
import sys

import pytest
from conftest import interactive


def test_empty_and_whitespace_lines_are_translated_in_place(multi30k, checkpoint):
    """Documented: an empty line is an empty sentence (just </s>) and gets its own output."""
    result = interactive(multi30k, checkpoint, "A dog runs .\n\n   \nA cat sleeps .\n")
    assert [int(i) for i in re.findall(r"^D-(\d+)\t", result.stdout, flags=re.M)] == [0, 1, 2, 3]


@pytest.mark.parametrize("command", [("fairseq-interactive",), (sys.executable, "-m", "fairseq_cli.interactive")])
def test_every_line_gets_its_output_in_order_whatever_it_holds(multi30k, checkpoint, tmp_path, command):
    """Invalid UTF-8, characters and words outside the vocabulary, an empty line, a line over the
    source limit: one translation each, in order, and the lines after them are still served, by the
    console command and by ``python -m``. Documented: invalid bytes become U+FFFD, an over-long line
    is truncated; both warn."""
    lines = [b"A dog runs .", b"\xff\xfe broken \xc3 bytes", "中文 zzqqxx ☃".encode(), b"", b"dog " * 1100, b"A cat sleeps ."]
    source = tmp_path / "input.txt"
    source.write_bytes(b"\n".join(lines) + b"\n")
    result = interactive(multi30k, checkpoint, "", "--input", str(source), command=command)
    assert [int(i) for i in re.findall(r"^D-(\d+)\t", result.stdout, flags=re.M)] == list(range(len(lines)))
    assert "input line 2 is not valid UTF-8; its invalid bytes are read as U+FFFD" in result.stderr
    assert re.search(
        r"a source line of 1\d{3} tokens .* is longer than --max-source-positions 1024; "
        r"translating its first 1023 tokens",
        result.stderr,
    )
