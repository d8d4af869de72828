"""Alignment options checked against the model before generating (``rnnsearch_plugin/alignment_options.py``)."""

from conftest import assert_one_line_error, fairseq_decode, interactive, run


def test_alignment_options_on_rnnencdec_stop_in_one_line(multi30k, rnnencdec_checkpoint):
    """--print-alignment and --replace-unk read the attention, which RNNencdec does not have."""
    generated = run(
        *fairseq_decode("fairseq-generate", multi30k / "bin", rnnencdec_checkpoint),
        "--gen-subset",
        "test",
        "--print-alignment",
        check=False,
    )
    assert_one_line_error(generated, "fairseq-generate: error: RNNencdec has no attention")
    replaced = interactive(multi30k, rnnencdec_checkpoint, "A dog .\n", "--replace-unk", "", check=False)
    assert_one_line_error(replaced, "fairseq-interactive: error: RNNencdec has no attention")


def test_replace_unk_names_the_option_it_needs(multi30k, checkpoint):
    """fairseq computes alignments only with --print-alignment: without it, --replace-unk would
    fail at the first <unk>. fairseq-generate's own check (raw text data) is one line too."""
    replaced = interactive(multi30k, checkpoint, "A dog .\n", "--replace-unk", "", check=False)
    assert_one_line_error(replaced, "--replace-unk copies the source word", "add --print-alignment")
    generated = run(
        *fairseq_decode("fairseq-generate", multi30k / "bin", checkpoint),
        "--replace-unk",
        "",
        check=False,
    )
    assert_one_line_error(generated, "fairseq-generate: error: --replace-unk requires a raw text dataset")
