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
