"""An alignment head added to the session's trained model and trained alone (fairseq-train
--finetune-from-model --alignment-head --train-alignment-head-only), as a user runs it: the
translation's weights and translations stay as they were, and the commands that print
alignments print the head's, saying so."""

import re

import torch
from conftest import assert_same_weights, generate, generate_command, lines_of, run
from fairseq import checkpoint_utils

from rnnsearch_plugin import load
from rnnsearch_plugin.data.textio import read_lines

SHORT = ("--max-len-a", "0", "--max-len-b", "12")  # hypotheses of at most 12 pieces: the tiny model's run on


def test_the_head_trains_alone_and_the_translation_keeps_its_weights(headed, checkpoint):
    path, log = headed
    assert_same_weights(path, checkpoint)  # every parameter of the model without a head, unchanged
    head = {k: v for k, v in checkpoint_utils.load_checkpoint_to_cpu(str(path))["model"].items() if "alignment_head" in k}
    assert head and "num. trained: " in log
    trained = int(re.search(r"num\. trained: ([\d,]+)", log).group(1).replace(",", ""))
    assert trained == sum(value.numel() for value in head.values())
    nll = [float(value) for value in re.findall(r"alignment_nll=([\d.]+)", log)]
    assert len(nll) >= 3 and nll[-1] < nll[0]


def test_generate_prints_the_heads_links_for_the_same_translations(headed, checkpoint, multi30k):
    path, _ = headed
    plain = generate(multi30k, checkpoint, "--print-alignment", *SHORT)
    found = run(*generate_command(multi30k, path, "--print-alignment", *SHORT))
    assert lines_of(found.stdout, "H") == lines_of(plain, "H")
    assert "--print-alignment prints the alignment head's a_ij" in found.stderr
    assert lines_of(found.stdout, "A") != lines_of(plain, "A")


def test_printed_links_are_the_argmax_of_the_heads_weights_through_the_api(headed, multi30k):
    """fairseq-generate's links (its generator's forward pass over each hypothesis) against the
    argmax of each target piece's row of ``forced`` (the API's own forward pass)."""
    path, _ = headed
    output = run(*generate_command(multi30k, path, "--print-alignment", "--remove-bpe", "none", *SHORT)).stdout
    model = load(path, multi30k / "bin")
    assert model.aligned_by == "head"
    sources, hypotheses, links = lines_of(output, "S"), lines_of(output, "H"), lines_of(output, "A")
    for index in list(sources)[:8]:
        source = model.src_dict.encode_line(sources[index], add_if_not_exist=False).long()
        target = model.tgt_dict.encode_line(hypotheses[index].split("\t", 1)[1], add_if_not_exist=False).long()
        weights = model.forced([source], [target], scores=False)[0].alignment
        expected = {f"{int(row[:-1].argmax())}-{i}" for i, row in enumerate(weights[:-1])}
        assert set(links[index].split()) == expected


def test_the_api_and_rnnsearch_align_say_which_alignment_they_give(headed, multi30k, tmp_path):
    path, _ = headed
    model = load(path, multi30k / "bin")
    sentence = read_lines(multi30k / "raw" / "test.en")[0]
    head, attention = model.align(sentence), model.align(sentence, attention=True)
    assert (head.by, attention.by) == ("head", "attention")
    assert head.target_tokens == attention.target_tokens and not torch.equal(torch.tensor(head.weights), torch.tensor(attention.weights))
    sources, targets = (multi30k / "raw" / f"test.{lang}" for lang in ("en", "fr"))
    (tmp_path / "src").write_text("".join(line + "\n" for line in read_lines(sources)[:5]))
    (tmp_path / "tgt").write_text("".join(line + "\n" for line in read_lines(targets)[:5]))
    common = ("--data", str(multi30k / "bin"), "--source", str(tmp_path / "src"), "--target", str(tmp_path / "tgt"))
    result = run("rnnsearch-align", "--path", str(path), *common, "--out", str(tmp_path / "links"))
    assert "alignments (the alignment head's a_ij)" in result.stdout
    assert len(read_lines(tmp_path / "links")) == 5
