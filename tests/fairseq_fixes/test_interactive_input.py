"""fairseq-interactive serves every line it is given (``fairseq_fixes/interactive_input.py``)."""

import re
import sys

import pytest
from conftest import fairseq_decode, interactive, lines_of, run


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


def test_a_byte_order_mark_at_the_start_of_the_input_is_no_part_of_the_first_sentence(multi30k, checkpoint, tmp_path):
    """Documented: an input file that begins with a UTF-8 byte-order mark (Windows Notepad's) translates
    its first line as the same line without it (given as pieces: sentencepiece's own normalisation
    would drop the mark, a tokeniser or BPE keeps it)."""
    source = tmp_path / "input.txt"
    source.write_text("\ufeff\u2581A \u2581dog \u2581run s\n\u2581A \u2581dog \u2581run s\n", encoding="utf-8")
    result = run(*fairseq_decode("fairseq-interactive", multi30k / "bin", checkpoint, "--beam", "2", "--input", str(source)))
    sources, hypotheses = lines_of(result.stdout, "S"), lines_of(result.stdout, "H")
    assert sources["0"] == sources["1"] and hypotheses["0"] == hypotheses["1"]
