"""Streamed reading against reading whole: the same lines, and the same error, whatever the block size."""

import gzip
import io

import pytest

from rnnsearch_plugin.data import textio
from rnnsearch_plugin.data.textio import DataError, decode_lines, lines_of

TEXT = "\ufeffé first\r\nsecond\rstill second\x0cand U+2028\u2028here\n\n€ last, no line feed".encode()


def streamed(raw: bytes) -> list[str]:
    return list(lines_of(io.BufferedReader(io.BytesIO(raw)), "text"))  # type: ignore[arg-type]


@pytest.mark.parametrize("block", [1, 3, 7, 1 << 20])
@pytest.mark.parametrize("compress", [False, True])
def test_lines_read_a_block_at_a_time_are_those_read_whole(monkeypatch, block, compress):
    """Blocks that end inside a line and inside a character; a byte-order mark, carriage returns,
    an empty line, a last line without a line feed."""
    monkeypatch.setattr(textio, "BLOCK", block)
    for raw in (TEXT, TEXT + b"\n", b"", b"\n"):
        raw = gzip.compress(raw) if compress else raw
        assert streamed(raw) == decode_lines(raw, "text")


@pytest.mark.parametrize("block", [2, 5, 1 << 20])
def test_bytes_that_are_not_utf8_name_the_same_line_and_byte(monkeypatch, block):
    monkeypatch.setattr(textio, "BLOCK", block)
    raw = TEXT.replace(b"still", b"st\xe9ll")
    with pytest.raises(DataError) as whole:
        decode_lines(raw, "text")
    with pytest.raises(DataError) as stream:
        streamed(raw)
    assert (
        str(stream.value)
        == str(whole.value)
        == "text is not valid UTF-8 on line 2 (invalid continuation byte at byte 22); re-encode it as UTF-8"
    )
