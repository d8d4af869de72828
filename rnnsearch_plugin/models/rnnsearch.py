"""The ``rnnsearch`` and ``rnnencdec`` fairseq models and their architectures (Section 4.2,
Appendix A.2.3).

``rnnsearch``: bidirectional encoder + attention decoder (Sections 3.1-3.2, A.2).
``rnnencdec``: the baseline of Cho et al. (2014a): a unidirectional encoder whose last state c
is the only thing the decoder sees of the source (A.2.2: "the model becomes RNN Encoder-Decoder
if we fix c_i"); same decoder and deep output, with the attention switched off.
"""

import logging
from dataclasses import dataclass, field, fields
from typing import Any, Optional

from fairseq.dataclass import ChoiceEnum, FairseqDataclass
from fairseq.models import FairseqEncoderDecoderModel, register_model, register_model_architecture
from fairseq.utils import safe_getattr
from omegaconf import II

from .. import hub
from ..alignment_options import check_options
from ..errors import UserInputError
from ..speed import engines
from ..speed.tricks import Tricks
from .alignment_head import CONTEXTS
from .attention import ATTENTIONS, Attention
from .decoder import READOUT_STATES
from .initialization import initialize_parameters

logger = logging.getLogger(__name__)
HEAD_PREFIX = "decoder.alignment_head."


@dataclass
class RNNEncDecConfig(FairseqDataclass):
    encoder_embed_dim: int = field(default=620, metadata={"help": "source embedding size m (A.2.3)"})
    encoder_hidden_size: int = field(default=1000, metadata={"help": "encoder GRU size n, per direction (A.2.3)"})
    decoder_embed_dim: int = field(default=620, metadata={"help": "target embedding size m"})
    decoder_hidden_size: int = field(default=1000, metadata={"help": "decoder GRU size n"})
    decoder_out_embed_dim: int = field(default=500, metadata={"help": "maxout units l of the deep output (A.2.2)"})
    maxout_pool_size: int = field(default=2, metadata={"help": "units pooled by each maxout unit (2 in the paper)"})
    readout_state: ChoiceEnum(READOUT_STATES) = field(  # type: ignore[valid-type]
        default="previous",
        metadata={
            "help": "state the deep output reads: 'previous' = s_{i-1} (Appendix A.2.2 and the "
            "authors' code), 'current' = s_i (main text, Eq. (4))"
        },
    )
    dropout: float = field(default=0.0, metadata={"help": "default for the three dropouts below (not --encoder-dropout-out)"})
    encoder_dropout_in: Optional[float] = field(default=None, metadata={"help": "dropout on source embeddings (default: --dropout)"})
    decoder_dropout_in: Optional[float] = field(default=None, metadata={"help": "dropout on target embeddings (default: --dropout)"})
    decoder_dropout_out: Optional[float] = field(default=None, metadata={"help": "dropout on the maxout layer t_i (default: --dropout)"})
    max_source_positions: int = field(default=1024, metadata={"help": "longest source accepted"})
    max_target_positions: int = field(default=1024, metadata={"help": "longest target accepted"})
    engine: ChoiceEnum(list(engines.ENGINES)) = field(  # type: ignore[valid-type]
        default="auto",
        metadata={
            "help": "what runs the model's equations (speed/engines.py): 'reference' = models/ as written; "
            "'cpu' = the CPU engine (speed/cpu.py), the same parameters a faster way; 'auto' = the CPU engine "
            "where the model runs on the CPU, the reference elsewhere"
        },
    )
    engine_tricks: str = field(
        default="all",
        metadata={
            "help": "the CPU engine's tricks (speed/tricks.py): 'all', 'none', or some of "
            f"{','.join(Tricks.names())}, joined by commas; one left out takes torch's own route to the same numbers"
        },
    )
    alignment_head: bool = field(
        default=False,
        metadata={
            "help": "add the alignment head (models/alignment_head.py, not the paper's): a_ij, the source word each "
            "emitted target word translates, which --print-alignment and the alignment commands then give; "
            "translation never reads it"
        },
    )
    alignment_head_context: ChoiceEnum(CONTEXTS) = field(  # type: ignore[valid-type]
        default="causal",
        metadata={"help": "what the head's 'where to look' reads: 'causal' = s_i; 'full' = s_i and the target words after y_i"},
    )
    alignment_head_size: int = field(default=256, metadata={"help": "hidden units of the alignment head's score and lexicon"})
    train_alignment_head_only: bool = field(
        default=False,
        metadata={
            "help": "train the alignment head alone: every other parameter stays as loaded (--finetune-from-model "
            "a model without a head), so the model translates exactly as before"
        },
    )
    amp: bool = II("common.amp")  # --amp: on a CPU, bfloat16 products (speed/precision.py)
    cpu: bool = II("common.cpu")  # --cpu: where the model runs, for --engine auto


@dataclass
class RNNSearchConfig(RNNEncDecConfig):
    attention: ChoiceEnum(list(ATTENTIONS)) = field(  # type: ignore[valid-type]
        default="additive",
        metadata={
            "help": "the alignment model's score (models/attention.py): 'additive' = the paper's "
            "v_a^T tanh(W_a s_{i-1} + U_a h_j) (A.1.2); 'general' = s_{i-1}^T W_a h_j (Luong et al. "
            "2015), not the paper's"
        },
    )
    attention_hidden_size: int = field(default=1000, metadata={"help": "hidden units n' of the alignment model (A.2.3)"})
    encoder_dropout_out: float = field(
        default=0.0,
        metadata={"help": "dropout on the annotations h_j that the alignment model weighs into c_i (default 0 whatever --dropout says)"},
    )


def resolved_dropout(cfg: Any, name: str) -> float:
    """A specific dropout, or --dropout where it is unset."""
    value = safe_getattr(cfg, name)
    return cfg.dropout if value is None else value


@register_model("rnnsearch", dataclass=RNNSearchConfig)
class RNNSearchModel(FairseqEncoderDecoderModel):
    """RNNsearch (Bahdanau et al. 2015)."""

    attentive = True

    @classmethod
    def build_attention(cls, cfg: Any, annotation_size: int) -> Optional[Attention]:
        """The alignment model ``--attention`` names (checkpoints that predate the option: the
        paper's), or None for RNNencdec."""
        if not cls.attentive:
            return None
        score = ATTENTIONS[str(safe_getattr(cfg, "attention", None) or "additive")]
        return score(cfg.decoder_hidden_size, annotation_size, cfg.attention_hidden_size)

    @staticmethod
    def alignment_head_arguments(cfg: Any, annotation_size: int, task: Any) -> Optional[dict[str, Any]]:
        """``AlignmentHead``'s arguments, where --alignment-head asks for one (checkpoints that
        predate the option: none)."""
        if not safe_getattr(cfg, "alignment_head", False):
            return None
        return dict(
            state_size=cfg.decoder_hidden_size,
            annotation_size=annotation_size,
            source_embed_dim=cfg.encoder_embed_dim,
            target_embed_dim=cfg.decoder_embed_dim,
            target_vocab_size=len(task.target_dictionary),
            hidden_size=cfg.alignment_head_size,
            context=str(cfg.alignment_head_context),
        )

    @property
    def aligns(self) -> bool:
        """Whether the model gives alignments: RNNsearch's attention, or an alignment head."""
        return self.attentive or self.aligned_by == "head"

    @property
    def aligned_by(self) -> str:
        """What the model's alignments are (``alignment_options.ALIGNED_BY``): "head", its alignment
        head's, or "attention"."""
        return "head" if self.decoder.alignment_head is not None else "attention"

    @property
    def full_context_alignment(self) -> bool:
        """What fairseq's ``SequenceGeneratorWithAlignment`` (--print-alignment) asks a model: whether
        to align each finished hypothesis by a forward pass over it, which a model with an alignment
        head needs (the head reads the emitted words), or from the attention beam search kept."""
        return self.aligned_by == "head"

    @classmethod
    def build_model(cls, cfg: Any, task: Any) -> "RNNSearchModel":
        """The encoder and decoder of the engine that ``--engine`` and the device choose (checkpoints
        that predate the option: auto), with ``--engine-tricks`` and ``--amp``: the one place where the
        engine is chosen (``speed/engines.py``)."""
        annotation_size = 2 * cfg.encoder_hidden_size if cls.attentive else cfg.encoder_hidden_size
        encoder, decoder = engines.build(
            cfg,
            encoder=dict(
                dictionary=task.source_dictionary,
                embed_dim=cfg.encoder_embed_dim,
                hidden_size=cfg.encoder_hidden_size,
                bidirectional=cls.attentive,
                dropout_in=resolved_dropout(cfg, "encoder_dropout_in"),
                dropout_out=safe_getattr(cfg, "encoder_dropout_out", 0.0),
                max_positions=cfg.max_source_positions,
            ),
            decoder=dict(
                dictionary=task.target_dictionary,
                embed_dim=cfg.decoder_embed_dim,
                hidden_size=cfg.decoder_hidden_size,
                context_size=annotation_size,
                summary_size=cfg.encoder_hidden_size,
                maxout_units=cfg.decoder_out_embed_dim,
                maxout_pool_size=cfg.maxout_pool_size,
                attention=cls.build_attention(cfg, annotation_size),
                readout_state=str(cfg.readout_state),
                dropout_in=resolved_dropout(cfg, "decoder_dropout_in"),
                dropout_out=resolved_dropout(cfg, "decoder_dropout_out"),
                max_positions=cfg.max_target_positions,
            ),
            alignment_head=cls.alignment_head_arguments(cfg, annotation_size, task),
        )
        model = cls(encoder, decoder)
        initialize_parameters(model)
        if safe_getattr(cfg, "train_alignment_head_only", False):
            model.freeze_all_but_alignment_head()
        return model

    def freeze_all_but_alignment_head(self) -> None:
        """--train-alignment-head-only: only the head's parameters train (fairseq's optimizer takes
        the parameters that require gradients)."""
        if self.decoder.alignment_head is None:
            raise UserInputError("--train-alignment-head-only trains the alignment head: add --alignment-head")
        for name, parameter in self.named_parameters():
            parameter.requires_grad_(name.startswith(HEAD_PREFIX))

    def prepare_for_inference_(self, cfg: Any) -> None:
        """fairseq-generate, fairseq-interactive and the hub call this once the model is on its
        device. It refuses in one line the alignment options (--print-alignment, --replace-unk)
        this model cannot serve (``alignment_options.py``), and tells the engine the command's --amp
        (``speed/engines.py``)."""
        check_options(self, cfg.generation)
        engines.prepare_for_inference(self, bool(safe_getattr(cfg.common, "amp", False)))
        super().prepare_for_inference_(cfg)

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True, model_cfg: Any = None, args: Any = None) -> Any:
        """Refuse, in one line, dictionaries that do not match the checkpoint's."""
        for side, prefix, dictionary in (
            ("source", "encoder", self.encoder.dictionary),
            ("target", "decoder", self.decoder.dictionary),
        ):
            stored = state_dict.get(f"{prefix}.embed_tokens.weight")
            if stored is not None and stored.size(0) != len(dictionary):
                raise UserInputError(
                    f"the checkpoint was trained with a {side} dictionary of {stored.size(0)} "
                    f"entries, but the one given has {len(dictionary)}: use the data directory "
                    "(dict.*.txt) the model was trained with"
                )
        return super().load_state_dict(self.with_new_head(state_dict), strict=strict, model_cfg=model_cfg, args=args)

    def with_new_head(self, state_dict: dict[str, Any]) -> dict[str, Any]:
        """A model with an alignment head loading the weights of one without (--finetune-from-model,
        to train the head on a trained model): the head keeps its initial parameters."""
        head = {name: value for name, value in self.state_dict().items() if name.startswith(HEAD_PREFIX)}
        if not head or any(name.startswith(HEAD_PREFIX) for name in state_dict):
            return state_dict
        logger.info("the checkpoint has no alignment head: the head starts from its initialisation")
        return {**state_dict, **head}

    @classmethod
    def from_pretrained(
        cls, model_name_or_path: str, checkpoint_file: str = "model.pt", data_name_or_path: str = ".", **kwargs: Any
    ) -> "hub.RNNSearchHubInterface":
        """fairseq's hub loading, returning ``hub.RNNSearchHubInterface`` (``hub.from_pretrained``)."""
        return hub.from_pretrained(model_name_or_path, checkpoint_file, data_name_or_path, archive_map=cls.hub_models(), **kwargs)


@register_model("rnnencdec", dataclass=RNNEncDecConfig)
class RNNEncDecModel(RNNSearchModel):
    """RNNencdec (Cho et al. 2014a), the paper's baseline."""

    attentive = False


PAPER_PRESET = {  # A.2.3; no dropout, as in the paper
    "encoder_embed_dim": 620,
    "decoder_embed_dim": 620,
    "encoder_hidden_size": 1000,
    "decoder_hidden_size": 1000,
    "attention_hidden_size": 1000,
    "decoder_out_embed_dim": 500,
}
SMALL_PRESET = {  # for CPU experiments on small corpora such as Multi30k
    "encoder_embed_dim": 256,
    "decoder_embed_dim": 256,
    "encoder_hidden_size": 256,
    "decoder_hidden_size": 256,
    "attention_hidden_size": 256,
    "decoder_out_embed_dim": 256,
    "dropout": 0.2,
}


def _apply_preset(args: Any, preset: dict[str, Any], config: type[FairseqDataclass]) -> None:
    """Fill what the user left unset: first from the preset, then from the dataclass defaults."""
    for spec in fields(config):
        if spec.name.startswith("_") or safe_getattr(args, spec.name) is not None:
            continue
        setattr(args, spec.name, preset.get(spec.name, spec.default))


@register_model_architecture("rnnsearch", "rnnsearch_wmt14")
def rnnsearch_wmt14(args: Any) -> None:
    _apply_preset(args, PAPER_PRESET, RNNSearchConfig)


@register_model_architecture("rnnsearch", "rnnsearch_small")
def rnnsearch_small(args: Any) -> None:
    _apply_preset(args, SMALL_PRESET, RNNSearchConfig)


@register_model_architecture("rnnencdec", "rnnencdec_wmt14")
def rnnencdec_wmt14(args: Any) -> None:
    _apply_preset(args, PAPER_PRESET, RNNEncDecConfig)


@register_model_architecture("rnnencdec", "rnnencdec_small")
def rnnencdec_small(args: Any) -> None:
    _apply_preset(args, SMALL_PRESET, RNNEncDecConfig)
