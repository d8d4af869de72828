"""The Python API: a trained model with its dictionaries, tokeniser and subword model.

    from rnnsearch_plugin import load      # or RNNSearchModel.from_pretrained(dir, file, data)
    model = load("checkpoints/checkpoint_best.pt", "work/multi30k_spm/bin")
    model.translate(["A dog runs."], beam=5)         # fairseq's GeneratorHubInterface
    model.score(["A dog runs."], ["Un chien court."])
    alignment = model.align("A dog runs.")            # the soft alignment of the translation (Figure 3's,
                                                      # or the alignment head's where the model has one)
    model.plot_alignment("A dog runs.", path="dog.png")
    for pair in model.align_corpus(sources, targets):  # word links of a corpus (rnnsearch-align)
        print(pair.links)

``load`` reads the data folder's ``../manifest.json`` (written by ``scripts/prepare_data.py``)
to set the tokeniser and subword model the data was prepared with, and refuses a checkpoint
whose language pair is not the data's (a Fr->En model given En->Fr data) in one line. A data folder
is shared like a checkpoint, so its manifest is read as data: only the pair, a tokeniser and a
subword scheme the plugin writes, and the scheme's model, a file inside the prepared folder;
anything else (a ``--user-dir``, whose code fairseq would import) is refused in one line. A
checkpoint trained without ``-s``/``-t`` names no pair: it gets the data folder's, as fairseq's
translation task infers it. fairseq's own hub
interface scores only language models and returns no usable soft alignment; ``score`` and
``align`` here force-decode a given target through the model. Every
method checks its arguments as rnnsearch-serve checks a request's (``arguments.py``): a
TypeError or ValueError in one line naming the argument; where it takes a list of sentences it
also takes one string (one result), and ``score`` and ``align_corpus`` refuse sides of
different lengths rather than drop the pairs left over.
"""

import os
from collections import deque
from collections.abc import Iterable, Iterator, Sized
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np
import torch
from fairseq import hub_utils
from fairseq.data import LanguagePairDataset, data_utils
from fairseq.hub_utils import GeneratorHubInterface

from . import arguments, fairseq_fixes
from .alignment_options import returning_attention
from .analysis.corpus_alignment import Forced, LinkRule, PairAlignment, align_corpus
from .arguments import shown
from .blank import is_blank
from .data.manifest import data_pair, subword_options
from .data.schemes import BPE, SPM, WORD
from .errors import UserInputError
from .fairseq_fixes.checkpoint_safety import RefusedCheckpointError
from .fairseq_fixes.empty_source import empty_rows
from .truncation import source_limit, warn_truncated


def pair_rows(weights: Optional[torch.Tensor], row: int, length: int, source_mask: torch.Tensor) -> Optional[torch.Tensor]:
    """One pair's T x S weights out of a batch's B x T' x S' (None stays None: RNNencdec's attention)."""
    return weights[row, :length][:, source_mask].float().cpu() if weights is not None else None


@dataclass
class Alignment:
    """Soft alignment weights of one sentence pair, the attention's alpha_ij (Eq. 6) or the
    alignment head's a_ij (``by``): one row per target token (the final </s> included), one
    column per source token (its </s> included)."""

    weights: np.ndarray  # T x S
    source_tokens: list[str]  # S
    target_tokens: list[str]  # T
    by: str = "attention"  # "head" or "attention" (``alignment_options.ALIGNED_BY``)


# what ``load`` and reading a command's inputs raise on a user's mistake (DataError is a ValueError,
# DamagedCheckpointError too; a crafted checkpoint is an UnpicklingError): the commands' one-line errors
USER_ERRORS = (ValueError, OSError, RefusedCheckpointError)


def check_pair(checkpoint: Path, data: Path, held: Optional[tuple[str, str]], model: "RNNSearchHubInterface") -> None:
    """ValueError in one line when the checkpoint translates another pair than the data holds (``held``)."""
    task = model.cfg.task
    if held is not None and (task.source_lang, task.target_lang) != held:
        raise UserInputError(
            f"{checkpoint} translates {task.source_lang}->{task.target_lang}, but {data} holds "
            f"{held[0]}->{held[1]} data: give it data prepared {task.source_lang}->{task.target_lang} "
            f"(scripts/prepare_data.py ... -s {task.source_lang} -t {task.target_lang})"
        )


def existing(value: Any, name: str, folder: bool) -> Path:
    """``value``, the path of a file (of a ``folder``), resolved; TypeError or FileNotFoundError naming ``name``."""
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a path, got {shown(value)}")
    path = Path(value).resolve()
    if not (path.is_dir() if folder else path.is_file()):
        raise FileNotFoundError(f"{name} {path}: no such {'folder' if folder else 'file'}")
    return path


def load(checkpoint: Union[str, Path], data: Union[str, Path], **overrides: Any) -> "RNNSearchHubInterface":
    """A trained model, its dictionaries (from ``data``, the fairseq-binarized folder) and,
    when ``data/../manifest.json`` exists, its tokeniser and subword model (``subword_options``);
    ValueError when the model's language pair is not the data's."""
    checkpoint, data = existing(checkpoint, "checkpoint", folder=False), existing(data, "data", folder=True)
    held, kwargs = data_pair(data), {**subword_options(data), **overrides}  # the whole manifest checked before anything loads
    model = from_pretrained(str(checkpoint.parent), checkpoint.name, str(data), **kwargs)
    check_pair(checkpoint, data, held, model)
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
    with inferring_pair():
        loaded = hub_utils.from_pretrained(model_name_or_path, checkpoint_file, data_name_or_path, archive_map=archive_map, **kwargs)
    cfg, task = loaded["args"], loaded["task"]
    if cfg.task.source_lang is None or cfg.task.target_lang is None:  # the task inferred it, into its own copy of cfg.task
        cfg.task.source_lang, cfg.task.target_lang = task.cfg.source_lang, task.cfg.target_lang  # before the tokeniser reads it
    return RNNSearchHubInterface(cfg, task, loaded["models"])


def inferred_pair(data: str) -> list[str]:
    """The pair of a checkpoint that names none (trained without ``-s``/``-t``), in place of fairseq's
    ``data_utils.infer_language_pair``, which takes the first pair among the data folder's file names:
    the folder's pair (``data_pair``: its manifest's, or the one pair of those names); UserInputError
    where the folder holds several, or none."""
    held = data_pair(Path(data))
    if held is None:
        raise UserInputError(
            f"the checkpoint names no language pair (trained without -s/-t), and {data} holds several pairs, or none: "
            "give it the folder of the one pair it was trained on"
        )
    return list(held)


@contextmanager
def inferring_pair() -> Iterator[None]:
    """fairseq's translation task infers a checkpoint's missing pair with ``inferred_pair`` while a model loads."""
    fairseq_inference = data_utils.infer_language_pair
    data_utils.infer_language_pair = inferred_pair
    try:
        yield
    finally:
        data_utils.infer_language_pair = fairseq_inference


def checked_lines(value: Any, name: str) -> Iterator[str]:
    """The sentences of ``value`` (a list or any iterable of strings), each checked as it is read
    (``arguments.text``: a string, valid Unicode); TypeError when ``value`` is no such thing."""
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise TypeError(f"{name} must be a string or a list of strings, got {shown(value)}")
    return (arguments.text(line, f"{name}[{index}]") for index, line in enumerate(value))


ENDED = object()  # what zip_longest gives for the side that ended first


def paired(sources: Any, targets: Any) -> tuple[Iterator[str], Iterator[str], bool]:
    """``sources`` and ``targets`` read a pair at a time, as ``zip`` reads them, each sentence
    checked, and whether they were one pair of strings. ValueError where one side ends before the
    other, which zip would hide by dropping the rest of the longer one (before any work where both
    have a length); TypeError for a string given with a list."""
    if isinstance(sources, str) != isinstance(targets, str):
        raise TypeError("sources and targets must both be strings (one pair) or both lists of strings (one target per source)")
    single = isinstance(sources, str)
    sources, targets = ([sources], [targets]) if single else (sources, targets)
    if isinstance(sources, Sized) and isinstance(targets, Sized) and len(sources) != len(targets):
        raise ValueError(f"sources has {len(sources)} sentences and targets {len(targets)}: give one target per source")
    lines, waiting = zip_longest(checked_lines(sources, "sources"), checked_lines(targets, "targets"), fillvalue=ENDED), deque()

    def source_side() -> Iterator[str]:
        for count, (source, target) in enumerate(lines):
            if ENDED in (source, target):
                shorter, longer = ("targets", "sources") if target is ENDED else ("sources", "targets")
                raise ValueError(f"{shorter} ended after {count} sentences, but {longer} goes on: give one target per source")
            waiting.append(target)
            yield source

    return source_side(), iter(waiting.popleft, ENDED), single


class RNNSearchHubInterface(GeneratorHubInterface):
    """fairseq's hub interface (``translate``, ``sample``, ``generate``, ``encode``/``decode``)
    with forced decoding: ``score`` and ``align`` of given sentence pairs. ``translate(...,
    unkpen=math.inf)`` forbids <unk> in the search (Table 1's "No UNK" setting). A sentence
    longer than the source limit is truncated with a warning, as in fairseq-interactive. An empty
    or blank sentence (no visible character: ``blank.py``) is translated, without running the
    model, into the empty translation (score 0, no alignment: ``fairseq_fixes/empty_source.py``);
    ``score`` and ``align`` of a given target still ask the model."""

    def sample(self, sentences: Union[str, list[str]], beam: int = 1, verbose: bool = False, **kwargs: Any) -> Any:  # type: ignore[override]
        """fairseq's ``sample`` (``translate``'s), each sentence checked first; one string, one result."""
        if isinstance(sentences, str):
            return self.sample([arguments.text(sentences, "sentences")], beam, verbose, **kwargs)[0]
        return super().sample(list(checked_lines(sentences, "sentences")), beam, verbose, **kwargs)

    def generate(self, tokenized_sentences: Any, beam: int = 5, *args: Any, **kwargs: Any) -> Any:
        """fairseq's ``generate``, its beam (and n-best, 1 to the beam) checked as rnnsearch-serve
        checks them; ``print_alignment`` ("hard", True, or "soft") also works after
        the model was prepared for inference without it (``alignment_options.py``)."""
        arguments.integer(beam, "beam", 1)
        if "nbest" in kwargs:
            arguments.integer(kwargs["nbest"], "nbest", 1, beam)
        if kwargs.get("print_alignment") is True:
            kwargs["print_alignment"] = "hard"  # as the bare --print-alignment
        with returning_attention(self.models, kwargs.get("print_alignment")):
            return super().generate(tokenized_sentences, beam, *args, **kwargs)

    def encode(self, sentence: str) -> torch.LongTensor:
        """The source tokens of ``sentence``, truncated to the source limit; a blank sentence
        (``blank.is_blank``: no visible character) is the empty one, </s> alone."""
        sentence = arguments.text(sentence, "sentence")
        tokens = super().encode("" if is_blank(sentence) else sentence)
        limit = source_limit(self.max_positions)
        if limit is not None and len(tokens) > limit:
            warn_truncated(sentence, len(tokens), limit)
            tokens = torch.cat([tokens[: limit - 1], tokens[-1:]])  # keep </s>
        return tokens

    def encode_target(self, sentence: str) -> torch.LongTensor:
        return self.tgt_dict.encode_line(self.apply_bpe(self.tokenize(arguments.text(sentence, "target"))), add_if_not_exist=False).long()

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

    @property
    def aligned_by(self) -> str:
        """What ``align``, ``align_corpus`` and ``forced`` give by default: "head" (the model's
        alignment head) or "attention"."""
        return self.models[0].aligned_by

    def forced(self, sources: list[torch.Tensor], targets: list[torch.Tensor], scores: bool = True) -> list[Forced]:
        """One teacher-forced pass of each (source, target) token pair, in one padded batch of up
        to 64 pairs at a time: for each pair the log-probability of every target token (T; None
        with ``scores=False``, which skips the output layer and its B x T x vocabulary tensors), its
        alignment (T x S: the alignment head's where the model has one, ``aligned_by``, else the
        attention's) and the attention's alpha (T x S; None for RNNencdec)."""
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
        results: list[tuple[int, Forced]] = []
        for start in range(0, len(sources), 64):
            batch = dataset.collater([dataset[i] for i in range(start, min(start + 64, len(sources)))])
            net_input = {k: v.to(self.device) for k, v in batch["net_input"].items()}
            with torch.no_grad():
                encoder_out = model.encoder(net_input["src_tokens"], src_lengths=net_input["src_lengths"])
                output, extra = model.decoder(
                    net_input["prev_output_tokens"], encoder_out=encoder_out, features_only=not scores
                )  # logits, or t_i without W_o
                token_scores = self._token_scores(model, output, extra, batch["target"]) if scores else None  # B x T
            for row, index in enumerate(batch["id"].tolist()):
                length = len(targets[index])
                source_mask = net_input["src_tokens"][row].ne(self.src_dict.pad())
                alignment, attention = (pair_rows(extra[key][0], row, length, source_mask) for key in ("attn", "attention"))
                row_scores = token_scores[row, :length].float().cpu() if token_scores is not None else None
                results.append((index, Forced(row_scores, alignment, attention)))
        return [result for _, result in sorted(results, key=lambda item: item[0])]

    def _token_scores(self, model: Any, logits: torch.Tensor, extra: dict[str, Any], target: torch.Tensor) -> torch.Tensor:
        """log p of each target token: B x T."""
        lprobs = model.get_normalized_probs((logits, extra), log_probs=True)  # B x T x V
        return lprobs.gather(2, target.to(self.device).unsqueeze(2)).squeeze(2)

    def score(self, sources: Union[str, list[str]], targets: Union[str, list[str]]) -> Any:  # type: ignore[override]
        """log p(target | source) of each pair (natural log, summed over the target tokens
        and </s>), with the per-token scores and the target's tokens; of one pair of strings, its one result."""
        source_lines, target_lines, single = paired(sources, targets)
        pairs = list(zip(source_lines, target_lines))
        target_tokens = [self.encode_target(target) for _, target in pairs]
        forced = self.forced([self.encode(source) for source, _ in pairs], target_tokens)
        results = [
            {"score": float(scores.sum()), "positional_scores": scores, "tokens": tokens}
            for (scores, _, _), tokens in zip(forced, target_tokens)
        ]
        return results[0] if single else results

    def align(self, source: str, target: Optional[str] = None, beam: int = 5, attention: bool = False) -> Alignment:
        """The soft alignment of ``source`` with ``target``, or with its translation by beam
        search when no target is given: the alignment head's where the model has one, else, or
        with ``attention``, the attention's (Figure 3); an empty source's empty translation has
        none (a 0 x 0 alignment)."""
        arguments.integer(beam, "beam", 1)
        by = "attention" if attention else self.aligned_by
        source_tokens = self.encode(arguments.text(source, "source"))
        if target is None and self.is_empty(source_tokens):
            return Alignment(np.zeros((0, 0), dtype=np.float32), [], [], by)  # the empty translation: nothing aligned
        if target is None:
            target_tokens = self.generate([source_tokens], beam=beam)[0][0]["tokens"].cpu()
        else:
            target_tokens = self.encode_target(target)
        (forced,) = self.forced([source_tokens], [target_tokens], scores=False)
        weights = forced.attention if attention else forced.alignment
        if weights is None:
            raise ValueError("RNNencdec has no attention to align with: use an rnnsearch model, or one with --alignment-head")
        return Alignment(weights.numpy(), self.pieces(self.src_dict, source_tokens), self.pieces(self.tgt_dict, target_tokens), by)

    def align_corpus(
        self,
        sources: Union[str, Iterable[str]],
        targets: Union[str, Iterable[str]],
        reverse: Optional["RNNSearchHubInterface"] = None,
        links: str = "argmax",
        threshold: float = 0.3,
        symmetrisation: Optional[str] = None,
    ) -> Iterator[PairAlignment]:
        """Word alignments of every (source, target) pair of tokenised lines, streamed in order
        (``analysis/corpus_alignment.py``): links by ``links`` ("argmax" or "threshold") and, with
        ``reverse`` (a model of the other direction), the ``symmetrisation`` of both directions
        ("intersect", "union" or "grow-diag-final-and", the default with a reverse model). One pair
        of strings is one pair; sides of different lengths end in a ValueError (``paired``), and
        an input that fails in its error, each after the pairs read before it."""
        if reverse is not None and not isinstance(reverse, RNNSearchHubInterface):
            raise TypeError(f"reverse must be a model of the other direction (load), got {shown(reverse)}")
        arguments.fraction(threshold, "threshold")
        if reverse is not None and symmetrisation is None:
            symmetrisation = "grow-diag-final-and"
        rule = LinkRule(links, threshold, symmetrisation)
        source_lines, target_lines, _ = paired(sources, targets)
        return align_corpus(self, source_lines, target_lines, reverse, rule)

    def is_empty(self, source_tokens: torch.Tensor) -> bool:
        """Whether an encoded source holds nothing but </s>: its translation is the empty one."""
        return bool(empty_rows(source_tokens[None], self.src_dict.eos(), self.src_dict.pad()))

    @staticmethod
    def pieces(dictionary: Any, tokens: torch.Tensor) -> list[str]:
        return [dictionary[index] for index in tokens.tolist()]

    def plot_alignment(
        self,
        source: str,
        target: Optional[str] = None,
        path: Union[str, Path] = "alignment.png",
        beam: int = 5,
        merge_words: bool = True,
        attention: bool = False,
    ) -> Alignment:
        """Figure 3 for one sentence in one call: aligns (see ``align``; ``attention``: the
        attention's even where the model has a head) and writes the heatmap to ``path`` (PNG or
        SVG); subword pieces merged into words when asked."""
        from .analysis.alignment import merge_pieces
        from .analysis.heatmap import plot_alignment

        alignment = self.align(source, target, beam, attention)
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
