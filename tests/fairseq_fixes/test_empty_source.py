"""An empty source has the empty translation, in the API, fairseq-interactive and fairseq-generate
(``fairseq_fixes/empty_source.py``), and the other sentences of its batch translate as without it."""

import pytest
from conftest import fairseq_decode, interactive, lines_of, run

from rnnsearch_plugin.blank import is_blank

SENTENCES = ["", "   ", "A dog runs in the snow .", "\t"]
# no visible character: zero-width space and joiner, direction marks, a right-to-left override, a byte
# order mark, an accent alone, an ideographic space and a line separator, all together
INVISIBLE = ["\u200b", "\u200d\u200e\u200f", "\u202e", "\ufeff", "\u0301", "\u3000\u2028", "\u200b \u202e\u0301\t"]


def test_api_translates_an_empty_source_into_the_empty_translation(hub):
    eos = hub.tgt_dict.eos()
    tokens = [hub.encode(sentence) for sentence in SENTENCES]
    assert [len(t) for t in tokens] == [1, 1, len(tokens[2]), 1] and len(tokens[2]) > 1
    alone = hub.generate([tokens[2]], beam=3)[0]
    mixed = hub.generate(tokens, beam=3)
    for index in (0, 1, 3):
        (hypo,) = mixed[index]
        assert (hypo["tokens"].tolist(), float(hypo["score"]), hypo["positional_scores"].tolist()) == ([eos], 0.0, [0.0])
    assert [h["tokens"].tolist() for h in mixed[2]] == [h["tokens"].tolist() for h in alone]
    assert [float(h["score"]) for h in mixed[2]] == pytest.approx([float(h["score"]) for h in alone], abs=1e-5)
    assert hub.translate(SENTENCES, beam=3) == ["", "", hub.translate(SENTENCES[2], beam=3), ""]
    assert hub.sample(SENTENCES[:2], beam=1, sampling=True) == ["", ""]
    assert hub.generate(tokens[:2], beam=2, print_alignment="hard")[0][0]["alignment"].numel() == 0
    alignment = hub.align("  ")
    assert alignment.weights.shape == (0, 0) and alignment.source_tokens == alignment.target_tokens == []


def test_a_sentence_with_no_visible_character_is_blank_in_the_api(hub):
    """Each is encoded as the empty sentence and translated into "", where the subword model reads
    some as pieces the model made a sentence of ("Une femme une."); a visible sentence with such
    characters in it is not blank."""
    assert all(is_blank(sentence) for sentence in INVISIBLE) and not any(is_blank(s) for s in ("\u200ba", "\u0301e", "\ue000", "."))
    assert [hub.encode(sentence).tolist() for sentence in INVISIBLE] == [hub.encode("").tolist()] * len(INVISIBLE)
    assert hub.translate(INVISIBLE, beam=2) == [""] * len(INVISIBLE)
    assert hub.translate(INVISIBLE[2], beam=2) == "" and hub.align(INVISIBLE[4]).weights.shape == (0, 0)


def test_interactive_gives_a_line_with_no_visible_character_the_empty_translation(multi30k, checkpoint):
    sentence = "A dog runs in the snow ."
    both = interactive(multi30k, checkpoint, "".join(line + "\n" for line in [sentence, *INVISIBLE])).stdout
    alone = interactive(multi30k, checkpoint, sentence + "\n").stdout
    assert lines_of(both, "H") == {"0": lines_of(alone, "H")["0"], **{str(index): "0.0\t" for index in range(1, len(INVISIBLE) + 1)}}


def test_interactive_gives_an_empty_line_an_empty_translation(multi30k, checkpoint):
    both = interactive(multi30k, checkpoint, "A dog runs in the snow .\n\n   \nTwo men sit .\n", "--print-alignment").stdout
    alone = interactive(multi30k, checkpoint, "A dog runs in the snow .\nTwo men sit .\n", "--print-alignment").stdout
    hypotheses, expected = lines_of(both, "H"), lines_of(alone, "H")
    assert hypotheses == {"0": expected["0"], "1": "0.0\t", "2": "0.0\t", "3": expected["1"]}
    assert (lines_of(both, "P")["1"], lines_of(both, "A")["2"], lines_of(both, "D")["2"]) == ("0.0000", "", "0.0\t")


def binarized(multi30k, folder, sources: list[str], targets: list[str]):
    """A test set of these subword-encoded lines, binarized with the session's dictionaries."""
    folder.mkdir()
    for language, lines in (("en", sources), ("fr", targets)):
        (folder / f"test.{language}").write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    run(
        "fairseq-preprocess",
        "-s",
        "en",
        "-t",
        "fr",
        "--testpref",
        str(folder / "test"),
        "--destdir",
        str(folder / "bin"),
        "--srcdict",
        str(multi30k / "bin" / "dict.en.txt"),
        "--tgtdict",
        str(multi30k / "bin" / "dict.fr.txt"),
        "--workers",
        "1",
    )
    return folder / "bin"


def test_generate_gives_an_empty_source_line_an_empty_translation(multi30k, checkpoint, tmp_path):
    sources = (multi30k / "spm" / "test.en").read_text(encoding="utf-8").splitlines()[:3]
    targets = (multi30k / "spm" / "test.fr").read_text(encoding="utf-8").splitlines()[:4]
    with_empty = binarized(multi30k, tmp_path / "with_empty", [sources[0], "", sources[1], sources[2]], targets)
    without = binarized(multi30k, tmp_path / "without", sources, [targets[0], *targets[2:]])

    def generate(data):
        output = run(
            *fairseq_decode("fairseq-generate", data, checkpoint),
            "--gen-subset",
            "test",
            "--beam",
            "2",
            "--print-alignment",
        ).stdout
        return lines_of(output, "S"), lines_of(output, "H"), lines_of(output, "A")

    sources_seen, hypotheses, alignments = generate(with_empty)
    _, expected, _ = generate(without)
    assert (sources_seen["1"], hypotheses["1"], alignments["1"]) == ("", "0.0\t", "")
    assert [hypotheses[i] for i in ("0", "2", "3")] == [expected[i] for i in ("0", "1", "2")]
