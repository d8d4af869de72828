"""rnnsearch-score on a fabricated fairseq-generate output: sacreBLEU tokenised for the reference's
language and chrF2 beside it, each against sacreBLEU's command line, with both signatures."""

import sys

import pytest
from conftest import sacrebleu_cli

from rnnsearch_plugin.cli.score import main
from rnnsearch_plugin.data.textio import write_atomic

REFERENCES = ["我们今天去北京。", "他喜欢喝茶，不喜欢咖啡。", "这本书很有意思。"]
HYPOTHESES = ["我们明天去北京。", "他喜欢喝茶。", "这本书有意思。"]


def generate_output(path, hypotheses: list[str]) -> None:
    """fairseq-generate's lines, out of source order as it prints them."""
    lines = [f"{kind}-{i}\t-0.5\t{text}" for i, text in reversed(list(enumerate(hypotheses))) for kind in "HD"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_score_prints_sacrebleu_for_the_target_language_and_chrf(tmp_path, capsys, monkeypatch):
    generate_output(tmp_path / "test.out", HYPOTHESES)
    write_atomic(tmp_path / "test.zh", REFERENCES)
    write_atomic(tmp_path / "hyp", HYPOTHESES)
    main([str(tmp_path / "test.out"), "--reference", str(tmp_path / "test.zh")])
    line = capsys.readouterr().out.strip()
    bleu = sacrebleu_cli(tmp_path / "test.zh", tmp_path / "hyp", "-l", "en-zh")  # sacreBLEU's choice for Chinese
    chrf = sacrebleu_cli(tmp_path / "test.zh", tmp_path / "hyp", "-m", "chrf")
    assert line.startswith(f"sacreBLEU = {bleu:.2f} (BLEU = {bleu:.2f} ")
    assert f"; chrF2 = {chrf:.2f} on 3 sentences of zh; nrefs:1|case:mixed|eff:no|tok:zh|smooth:exp|" in line
    assert line.split("; ")[-1].startswith("nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|")
    write_atomic(tmp_path / "reference.txt", REFERENCES)  # no language in its name: --target-lang names it
    for module in ("MeCab", "ipadic"):  # as if sacrebleu[ja]'s packages were not installed
        monkeypatch.setitem(sys.modules, module, None)
    main([str(tmp_path / "test.out"), "--reference", str(tmp_path / "reference.txt"), "--target-lang", "ja"])
    captured = capsys.readouterr()
    assert "of ja; nrefs:1|case:mixed|eff:no|tok:char|smooth:exp|" in captured.out
    assert captured.err == (
        "rnnsearch-score: note: sacreBLEU's ja-mecab tokenizer needs MeCab and ipadic "
        '(pip install "sacrebleu[ja]"): BLEU on characters (tok:char) instead\n'
    )
    with pytest.raises(SystemExit):
        main([str(tmp_path / "test.out"), "--reference", str(tmp_path / "hyp")])
    assert "--reference " + str(tmp_path / "hyp") + " has no extension naming its language: give --target-lang" in capsys.readouterr().err


def test_a_line_ends_at_a_line_feed_only_as_sacrebleu_reads_it(tmp_path, capsys):
    """A reference holding U+2028 and a form feed is still one line each: the hypotheses match it
    one for one, and the score is sacreBLEU's command line's on the same files."""
    references = ["Un chien\u2028court dans la neige .", "Deux hommes\x0cdiscutent .", "Une femme lit ."]
    hypotheses = ["Un chien court dans la neige .", "Deux hommes parlent .", "Une femme lit un livre ."]
    generate_output(tmp_path / "test.out", hypotheses)
    write_atomic(tmp_path / "test.fr", references)
    write_atomic(tmp_path / "hyp", hypotheses)
    main([str(tmp_path / "test.out"), "--reference", str(tmp_path / "test.fr")])
    bleu = sacrebleu_cli(tmp_path / "test.fr", tmp_path / "hyp", "-l", "en-fr")
    assert capsys.readouterr().out.startswith(f"sacreBLEU = {bleu:.2f} (BLEU = {bleu:.2f} ")


def score_error(tmp_path, lines: list[str], capsys) -> str:
    """What rnnsearch-score says of a generate output of these ``lines`` against REFERENCES: its
    one line of error, or its score."""
    (tmp_path / "test.out").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    write_atomic(tmp_path / "test.zh", REFERENCES)
    try:
        main([str(tmp_path / "test.out"), "--reference", str(tmp_path / "test.zh")])
    except SystemExit as exit:
        return str(exit.code)
    return capsys.readouterr().out


def printed(sentences: list[int], *kinds: str) -> list[str]:
    """fairseq-generate's lines of these sentences (the test's hypotheses), each line of ``kinds`` per sentence."""
    return [f"{kind}-{i}\t-0.5\t{HYPOTHESES[i]}" for i in sentences for kind in kinds]


@pytest.mark.parametrize(
    "lines,reason",
    [
        (printed([0, 1, 2], "H", "D") + printed([1], "D"), "sentence 1 is printed more than once (its lines come in 2 places)"),
        (
            printed([0], "H", "D") + printed([1], "H", "D", "D") + printed([2], "H", "D"),
            "sentence 1 is printed more than once (2 D-1 lines for 1 H-1 line)",
        ),
        (printed([0, 2], "D") + printed([1], "D", "D"), "sentence 1 is printed more than once (2 D-1 lines for 0 H-1 lines)"),
        (printed([2, 0], "S", "H", "D") + printed([1], "S", "H", "D", "S", "H", "D"), "sentence 1 is printed more than once (2 S-1 lines)"),
    ],
    ids=["elsewhere", "beside itself", "without H lines", "in two outputs"],
)
def test_a_sentence_printed_twice_is_refused_in_one_line(tmp_path, capsys, lines, reason):
    """Elsewhere in the output, beside itself, without H- lines, or two whole outputs' lines of it."""
    message = score_error(tmp_path, lines, capsys)
    assert message.startswith(f"rnnsearch-score: error: {tmp_path / 'test.out'}: {reason}; regenerate") and "\n" not in message


def test_an_nbest_list_is_scored_by_its_first_hypothesis(tmp_path, capsys):
    """--nbest 2's lines (S-, then H-, D-, P- for each hypothesis): each sentence once, its best first."""
    best = [line for i in (2, 0, 1) for line in [f"S-{i}\tsource", *printed([i], "H", "D", "P"), f"H-{i}\t-0.9\tx", f"D-{i}\t-0.9\tx"]]
    single = printed([0, 1, 2], "D")
    assert score_error(tmp_path, best, capsys) == score_error(tmp_path, single, capsys)
