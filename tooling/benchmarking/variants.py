"""What the benchmark measures: the training, decoding and paper-size variants, each a model
and the fairseq options it runs with, and the peer every speed is set against."""

CROSS_ENTROPY = ["--criterion", "cross_entropy"]
CHUNKED = ["--criterion", "chunked_cross_entropy"]
BFLOAT16 = ["--amp"]  # on a CPU: bfloat16 products (rnnsearch_plugin/speed/precision.py)
VARIANTS = {  # train row -> (checkpoint name, options); the first variant of each arch saves its checkpoint
    "lstm": ("lstm", CROSS_ENTROPY),
    "rnnsearch_small": ("rnnsearch_small", CROSS_ENTROPY),
    "rnnsearch_small chunked": ("rnnsearch_small", CHUNKED),
    "rnnsearch_small bf16": ("rnnsearch_small", [*CROSS_ENTROPY, *BFLOAT16]),
    "rnnsearch_small bf16 chunked": ("rnnsearch_small", [*CHUNKED, *BFLOAT16]),
    "rnnencdec_small": ("rnnencdec_small", CROSS_ENTROPY),
    "rnnencdec_small bf16 chunked": ("rnnencdec_small", [*CHUNKED, *BFLOAT16]),
}
DECODERS = {  # decode row -> (checkpoint name, options)
    "lstm": ("lstm", []),
    "rnnsearch_small": ("rnnsearch_small", []),
    "rnnsearch_small bf16": ("rnnsearch_small", BFLOAT16),
    "rnnencdec_small": ("rnnencdec_small", []),
    "rnnencdec_small bf16": ("rnnencdec_small", BFLOAT16),
}
PAPER = [  # (arch, dtype, criterion)
    ("rnnsearch_wmt14", "float32", "cross_entropy"),
    ("rnnsearch_wmt14", "float32", "chunked_cross_entropy"),
    ("rnnsearch_wmt14", "bfloat16", "cross_entropy"),
    ("rnnsearch_wmt14", "bfloat16", "chunked_cross_entropy"),
    ("rnnencdec_wmt14", "float32", "cross_entropy"),
    ("rnnencdec_wmt14", "bfloat16", "chunked_cross_entropy"),
]
PEER = "lstm"
PEER_SIZES = ("encoder_embed_dim", "encoder_hidden_size", "decoder_embed_dim", "decoder_hidden_size", "decoder_out_embed_dim")


def lstm_options() -> list[str]:
    """fairseq's ``lstm`` at the small preset's sizes (the same option names), attention over a
    bidirectional encoder; its dropout is the caller's (tooling/reproduce_results.sh tunes it)."""
    from rnnsearch_plugin.models.rnnsearch import SMALL_PRESET

    sizes = [option for name in PEER_SIZES for option in (f"--{name.replace('_', '-')}", str(SMALL_PRESET[name]))]
    return ["--arch", PEER, "--encoder-bidirectional", *sizes]


def arch_options(arch: str) -> list[str]:
    """fairseq's options for a checkpoint name (rnnsearch_small, rnnencdec_small or lstm): the
    lstm with the small preset's dropout."""
    if arch != PEER:
        return ["--arch", arch]
    from rnnsearch_plugin.models.rnnsearch import SMALL_PRESET

    return [*lstm_options(), "--dropout", str(SMALL_PRESET["dropout"])]


def variant_options(name: str) -> list[str]:
    """A train variant's model and criterion options."""
    arch, options = VARIANTS[name]
    return [*arch_options(arch), *options]
