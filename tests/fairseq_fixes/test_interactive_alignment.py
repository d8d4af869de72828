"""fairseq-interactive prints --print-alignment soft as fairseq-generate does
(``fairseq_fixes/interactive_alignment.py``)."""

import sys

import pytest
from conftest import fairseq_decode, lines_of, run


@pytest.fixture(scope="module")
def pieces(multi30k, tmp_path_factory):
    """Sources as subword pieces (three test sentences, one of a single piece, an empty one) and
    the same sources binarized with the session's dictionaries, for fairseq-generate."""
    folder = tmp_path_factory.mktemp("pieces")
    sides = {lang: (multi30k / "spm" / f"test.{lang}").read_text(encoding="utf-8").splitlines()[:3] for lang in ("en", "fr")}
    sources = [*sides["en"], "▁dog", ""]
    (folder / "test.en").write_text("".join(line + "\n" for line in sources), encoding="utf-8")
    (folder / "test.fr").write_text("".join(line + "\n" for line in [*sides["fr"], "▁chien", "▁chien"]), encoding="utf-8")
    dictionaries = ["--srcdict", str(multi30k / "bin" / "dict.en.txt"), "--tgtdict", str(multi30k / "bin" / "dict.fr.txt")]
    run("fairseq-preprocess", "-s", "en", "-t", "fr", "--testpref", str(folder / "test"), *dictionaries, "--destdir", str(folder / "bin"))
    return sources, folder / "bin"


@pytest.mark.parametrize("command", [("fairseq-interactive",), (sys.executable, "-m", "fairseq_cli.interactive")])
def test_a_soft_alignment_is_printed_as_fairseq_generate_prints_it(multi30k, checkpoint, pieces, command):
    """Each sentence's A- line: every target token's weights over the source tokens and </s>, joined
    by commas, the tokens separated by spaces, the same as fairseq-generate's for the same sentences
    (a one-piece source's rows of two weights too, which fairseq-interactive printed as pairs "a-b";
    an empty source's empty line), by the console command and by ``python -m``."""
    sources, binarized = pieces
    options = ("--beam", "2", "--batch-size", "1", "--print-alignment", "soft")
    generated = lines_of(run(*fairseq_decode("fairseq-generate", binarized, checkpoint, *options)).stdout, "A")
    decode = fairseq_decode(command[-1], multi30k / "bin", checkpoint, *options)
    printed = lines_of(run(*command[:-1], *decode, stdin="".join(line + "\n" for line in sources)).stdout, "A")
    assert printed == generated and len(printed) == len(sources)
    one_piece = printed[str(sources.index("▁dog"))].split(" ")
    assert all(len(row.split(",")) == 2 and "-" not in row for row in one_piece)
    assert printed[str(sources.index(""))] == ""
