"""The Python API: a trained model with its dictionaries, tokeniser and subword model.

    from rnnsearch_plugin import load      # or RNNSearchModel.from_pretrained(dir, file, data)
    model = load("checkpoints/checkpoint_best.pt", "work/multi30k_spm/bin")
    model.translate(["A dog runs."], beam=5)         # fairseq's GeneratorHubInterface
    model.score(["A dog runs."], ["Un chien court."])
    alignment = model.align("A dog runs.")            # Figure 3: the soft alignment of the translation
    model.plot_alignment("A dog runs.", path="dog.png")
    for pair in model.align_corpus(sources, targets):  # word links of a corpus (rnnsearch-align)
        print(pair.links)

``load`` reads the data folder's ``../manifest.json`` (written by ``scripts/prepare_data.py``)
to set the tokeniser and subword model the data was prepared with, and refuses a checkpoint
whose language pair is not the data's (a Fr->En model given En->Fr data) in one line. fairseq's own hub
interface scores only language models and returns no usable soft alignment (fairseq issues
1880, 1882); ``score`` and ``align`` here force-decode a given target through the model.
"""

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Union

import numpy as np
import torch
from fairseq import hub_utils
from fairseq.data import LanguagePairDataset
from fairseq.hub_utils import GeneratorHubInterface

from . import fairseq_fixes
from .data.schemes import BPE, SPM, WORD
from .fairseq_fixes.alignment_options import returning_attention
from .fairseq_fixes.checkpoint_safety import RefusedCheckpointError
from .fairseq_fixes.empty_source import empty_rows
from .fairseq_fixes.interactive_input import source_limit, warn_truncated

if TYPE_CHECKING:
    from .analysis.corpus_alignment import PairAlignment


@dataclass
class Alignment:
    """Soft alignment weights alpha_ij (Eq. 6) of one sentence pair: one row per target
    token (the final </s> included), one column per source token (its </s> included)."""

    weights: np.ndarray  # T x S
    source_tokens: list[str]  # S
    target_tokens: list[str]  # T


def options_to_kwargs(options: list[str]) -> dict[str, str]:
    """fairseq options with values ('--bpe', 'sentencepiece', ...) as from_pretrained kwargs."""
    return {name[2:].replace("-", "_"): value for name, value in zip(options[::2], options[1::2])}


# what ``load`` and reading a command's inputs raise on a user's mistake (DataError is a ValueError,
# DamagedCheckpointError too; a crafted checkpoint is an UnpicklingError): the commands' one-line errors
USER_ERRORS = (ValueError, OSError, RefusedCheckpointError)


def data_pair(data: Path) -> Optional[tuple[str, str]]:
    """The (source, target) languages of a fairseq-binarized folder: its manifest's, else the one
    pair its files are named for (``{split}.{src}-{tgt}.{lang}.idx``); None when that says nothing."""
    manifest = data.parent / "manifest.json"
    if manifest.exists():
        recorded = json.loads(manifest.read_text())
        if "source_lang" in recorded:
            return recorded["source_lang"], recorded["target_lang"]
    pairs = {tuple(path.name.split(".")[1].split("-")) for path in data.glob("*.*-*.*.idx")}
    return next(iter(pairs)) if len(pairs) == 1 else None  # type: ignore[return-value]


def check_pair(checkpoint: Path, data: Path, model: "RNNSearchHubInterface") -> None:
    """ValueError in one line when the checkpoint translates another pair than the data holds."""
    task, held = model.cfg.task, data_pair(data)
    if held is not None and (task.source_lang, task.target_lang) != held:
        raise ValueError(
            f"{checkpoint} translates {task.source_lang}->{task.target_lang}, but {data} holds "
            f"{held[0]}->{held[1]} data: give it data prepared {task.source_lang}->{task.target_lang} "
            f"(scripts/prepare_data.py ... -s {task.source_lang} -t {task.target_lang})"
        )


def load(checkpoint: Union[str, Path], data: Union[str, Path], **overrides: Any) -> "RNNSearchHubInterface":
    """A trained model, its dictionaries (from ``data``, the fairseq-binarized folder) and,
    when ``data/../manifest.json`` exists, its tokeniser and subword model; ValueError when the
    model's language pair is not the data's."""
    checkpoint, data = Path(checkpoint).resolve(), Path(data).resolve()
    manifest = data.parent / "manifest.json"
    kwargs = options_to_kwargs(json.loads(manifest.read_text()).get("detokenise_options", [])) if manifest.exists() else {}
    kwargs.update(overrides)
    model = from_pretrained(str(checkpoint.parent), checkpoint.name, str(data), **kwargs)
    check_pair(checkpoint, data, model)
    return model


def from_pretrained(
    model_name_or_path: str,
    checkpoint_file: str = "model.pt",
    data_name_or_path: str = ".",
    archive_map: Optional[dict[str, Any]] = None,
    **kwargs: Any,
) -> "RNNSearchHubInterface":
    """fairseq's hub loading (``hub_utils.from_pretrained``), returning ``RNNSearchHubInterface``
    (``RNNSearchModel.from_pretrained`` calls this), with the plugin's repairs of fairseq installed first
    (``fairseq_fixes.install``: weights-only loading, every sentence batched, the empty translation of an
    empty source). Like fairseq-generate, it runs in float32 unless given ``amp=True`` (bfloat16 on a CPU,
    ``speed/precision.py``), whatever the checkpoint was trained with."""
    fairseq_fixes.install()
    kwargs.setdefault("amp", False)
    loaded = hub_utils.from_pretrained(model_name_or_path, checkpoint_file, data_name_or_path, archive_map=archive_map, **kwargs)
    return RNNSearchHubInterface(loaded["args"], loaded["task"], loaded["models"])


class RNNSearchHubInterface(GeneratorHubInterface):
    """fairseq's hub interface (``translate``, ``sample``, ``generate``, ``encode``/``decode``)
    with forced decoding: ``score`` and ``align`` of given sentence pairs. ``translate(...,
    unkpen=math.inf)`` forbids <unk> in the search (Table 1's "No UNK" setting). A sentence
    longer than the source limit is truncated with a warning, as in fairseq-interactive. An empty
    or blank sentence is translated, without running the model, into the empty translation
    (score 0, no alignment: ``fairseq_fixes/empty_source.py``); ``score`` and ``align`` of a
    given target still ask the model."""

    def generate(self, tokenized_sentences: Any, *args: Any, **kwargs: Any) -> Any:
        """fairseq's ``generate``; ``print_alignment`` ("hard", True, or "soft") also works after
        the model was prepared for inference without it (``fairseq_fixes/alignment_options.py``)."""
        if kwargs.get("print_alignment") is True:
            kwargs["print_alignment"] = "hard"  # as the bare --print-alignment
        with returning_attention(self.models, kwargs.get("print_alignment")):
            return super().generate(tokenized_sentences, *args, **kwargs)

    def encode(self, sentence: str) -> torch.LongTensor:
        tokens = super().encode(sentence)
        limit = source_limit(self.max_positions)
        if limit is not None and len(tokens) > limit:
            warn_truncated(sentence, len(tokens), limit)
            tokens = torch.cat([tokens[: limit - 1], tokens[-1:]])  # keep </s>
        return tokens

    def encode_target(self, sentence: str) -> torch.LongTensor:
        return self.tgt_dict.encode_line(self.apply_bpe(self.tokenize(sentence)), add_if_not_exist=False).long()

    @property
    def pair(self) -> tuple[str, str]:
        """The (source, target) languages the model translates."""
        return self.cfg.task.source_lang, self.cfg.task.target_lang

    def encode_words(self, words: list[str], target: bool = False) -> tuple[torch.Tensor, list[int]]:
        """Token ids of the given words, each tokenised and subword-encoded on its own (+ </s>),
        and the word (0-based) of each piece: every piece belongs to exactly one given word."""
        pieces, groups = [], []
        for index, word in enumerate(words):
            encoded = self.apply_bpe(self.tokenize(word)).split()
            pieces += encoded
            groups += [index] * len(encoded)
        dictionary = self.tgt_dict if target else self.src_dict
        return dictionary.encode_line(" ".join(pieces), add_if_not_exist=False).long(), groups

    def forced(
        self, sources: list[torch.Tensor], targets: list[torch.Tensor], scores: bool = True
    ) -> list[tuple[Optional[torch.Tensor], Optional[torch.Tensor]]]:
        """Teacher-forced pass of each (source, target) token pair; for each pair the
        log-probability of every target token (T; None with ``scores=False``, which skips the
        output layer and its B x T x vocabulary tensors) and the attention weights (T x S)."""
        model = self.models[0]
        dataset = LanguagePairDataset(
            sources,
            [len(s) for s in sources],
            self.src_dict,
            targets,
            [len(t) for t in targets],
            self.tgt_dict,
            left_pad_source=self.cfg.task.left_pad_source,
            left_pad_target=False,
        )
        results = []
        for start in range(0, len(sources), 64):
            batch = dataset.collater([dataset[i] for i in range(start, min(start + 64, len(sources)))])
            net_input = {k: v.to(self.device) for k, v in batch["net_input"].items()}
            with torch.no_grad():
                encoder_out = model.encoder(net_input["src_tokens"], src_lengths=net_input["src_lengths"])
                output, extra = model.decoder(
                    net_input["prev_output_tokens"], encoder_out=encoder_out, features_only=not scores
                )  # logits, or t_i without W_o
                token_scores = self._token_scores(model, output, extra, batch["target"]) if scores else None  # B x T
            attention = extra["attn"][0]  # B x T x S, or None for RNNencdec
            for row, index in enumerate(batch["id"].tolist()):
                length = len(targets[index])
                source_mask = net_input["src_tokens"][row].ne(self.src_dict.pad())
                weights = attention[row, :length][:, source_mask] if attention is not None else None
                results.append(
                    (
                        index,
                        (
                            token_scores[row, :length].float().cpu() if scores else None,
                            weights.float().cpu() if weights is not None else None,
                        ),
                    )
                )
        return [result for _, result in sorted(results, key=lambda item: item[0])]

    def _token_scores(self, model: Any, logits: torch.Tensor, extra: dict[str, Any], target: torch.Tensor) -> torch.Tensor:
        """log p of each target token: B x T."""
        lprobs = model.get_normalized_probs((logits, extra), log_probs=True)  # B x T x V
        return lprobs.gather(2, target.to(self.device).unsqueeze(2)).squeeze(2)

    def score(self, sources: list[str], targets: list[str]) -> list[dict[str, Any]]:  # type: ignore[override]
        """log p(target | source) of each pair (natural log, summed over the target tokens
        and </s>), with the per-token scores and the target's tokens."""
        target_tokens = [self.encode_target(t) for t in targets]
        forced = self.forced([self.encode(s) for s in sources], target_tokens)
        return [
            {"score": float(scores.sum()), "positional_scores": scores, "tokens": tokens}
            for (scores, _), tokens in zip(forced, target_tokens)
        ]

    def align(self, source: str, target: Optional[str] = None, beam: int = 5) -> Alignment:
        """The soft alignment of ``source`` with ``target``, or with its translation by beam
        search when no target is given (Figure 3); an empty source's empty translation has none
        (a 0 x 0 alignment)."""
        source_tokens = self.encode(source)
        if target is None and self.is_empty(source_tokens):
            return Alignment(np.zeros((0, 0), dtype=np.float32), [], [])  # the empty translation: nothing aligned
        if target is None:
            target_tokens = self.generate([source_tokens], beam=beam)[0][0]["tokens"].cpu()
        else:
            target_tokens = self.encode_target(target)
        ((_, weights),) = self.forced([source_tokens], [target_tokens], scores=False)
        if weights is None:
            raise ValueError("RNNencdec has no attention to align with: use an rnnsearch model")
        return Alignment(weights.numpy(), self.pieces(self.src_dict, source_tokens), self.pieces(self.tgt_dict, target_tokens))

    def align_corpus(
        self,
        sources: Iterable[str],
        targets: Iterable[str],
        reverse: Optional["RNNSearchHubInterface"] = None,
        links: str = "argmax",
        threshold: float = 0.3,
        symmetrisation: Optional[str] = None,
    ) -> Iterator["PairAlignment"]:
        """Word alignments of every (source, target) pair of tokenised lines, streamed in order
        (``analysis/corpus_alignment.py``): links by ``links`` ("argmax" or "threshold") and, with
        ``reverse`` (a model of the other direction), the ``symmetrisation`` of both directions
        ("intersect", "union" or "grow-diag-final-and", the default with a reverse model)."""
        from .analysis.corpus_alignment import LinkRule, align_corpus

        if reverse is not None and symmetrisation is None:
            symmetrisation = "grow-diag-final-and"
        return align_corpus(self, sources, targets, reverse, LinkRule(links, threshold, symmetrisation))

    def is_empty(self, source_tokens: torch.Tensor) -> bool:
        """Whether an encoded source holds nothing but </s>: its translation is the empty one."""
        return bool(empty_rows(source_tokens[None], self.src_dict.eos(), self.src_dict.pad()))

    @staticmethod
    def pieces(dictionary: Any, tokens: torch.Tensor) -> list[str]:
        return [dictionary[index] for index in tokens.tolist()]

    def plot_alignment(
        self, source: str, target: Optional[str] = None, path: Union[str, Path] = "alignment.png", beam: int = 5, merge_words: bool = True
    ) -> Alignment:
        """Figure 3 for one sentence in one call: aligns (see ``align``) and writes the
        heatmap to ``path`` (PNG or SVG); subword pieces merged into words when asked."""
        from .analysis.alignment import merge_pieces
        from .analysis.heatmap import plot_alignment

        alignment = self.align(source, target, beam)
        weights, source_labels, target_labels = alignment.weights, alignment.source_tokens, alignment.target_tokens
        if merge_words:
            weights, source_labels, target_labels = merge_pieces(weights, source_labels, target_labels, self.scheme)
        plot_alignment(weights, source_labels, target_labels, Path(path))
        return alignment

    @property
    def scheme(self) -> str:
        """How pieces make words: 'spm', 'bpe' (subword-nmt's @@) or 'word'."""
        name = getattr(self.cfg.bpe, "_name", None) if self.cfg.bpe is not None else None
        return {"sentencepiece": SPM, "subword_nmt": BPE}.get(name or "", WORD)
