"""Preprocessing schemes (an option of every corpus) and their inverses for scoring.

- ``word`` (Section 4.1): Moses tokenisation (sacremoses, for the languages it knows:
  ``languages.moses_languages``), original case; the 30,000-word
  shortlist itself is made by binarisation (``binarise.py``), as fairseq-preprocess's
  ``--nwordssrc/--nwordstgt`` makes it (the N most frequent words, ties broken by code-point order
  of the word; every other word becomes <unk>).
  Inverse: Moses detokenisation.
- ``bpe``: subword-nmt BPE learned on the Moses-tokenised training text, joint or one model
  per language. Inverse: remove "@@ " then Moses detokenisation.
- ``spm``: sentencepiece (unigram or BPE) on raw text, one joint model, for any script; its
  character coverage 0.9995 where either language has a large character set (Chinese, Japanese,
  Korean), else 1.0, as sentencepiece recommends. Inverse: decode pieces.
"""

import functools
import os
import random
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from itertools import chain, islice
from pathlib import Path
from typing import Any, Protocol

from .languages import moses_languages
from .textio import DataError

LARGE_CHARACTER_SETS = frozenset({"zh", "yue", "ja", "ko"})
WORD, BPE, SPM = "word", "bpe", "spm"
SCHEMES = (WORD, BPE, SPM)  # the names every --scheme option and the merging of pieces into words read
CHUNK = 10_000  # lines sentencepiece encodes at a time, on its own threads
MOSES_CHUNK, MOSES_AHEAD = 1_000, 4  # lines one Moses worker process tokenises at a time; chunks in flight per worker
SAMPLE, SEED = 200_000, 1  # the most lines sentencepiece learns from (docs/data.md#large-corpora), and the sample's seed
# sentencepiece's input_sentence_size: more than the lines it is given (at most SAMPLE), so that it trains on all
# of them. The model file records it, and the published models of small corpora (Multi30k's) were trained with it.
# sentencepiece's own sampler is not used: its memory grows with the lines it reads (by 90 MB from 0.2 to 8 million).
WHOLE = 2_000_000


class Scheme(Protocol):
    name: str

    def use_languages(self, langs: tuple[str, str]) -> None:
        """Set the scheme up for the pair (source, target), before anything is read; DataError
        when it cannot serve one of them."""
        ...

    def manifest_entries(self) -> dict[str, Any]:
        """What the manifest records of the scheme's settings beyond its name."""
        ...

    def learn(self, train: dict[str, Iterable[str]], folder: Path) -> None:
        """The scheme's model from the training text of each language (read anew at each
        iteration), in fixed memory whatever its size."""
        ...

    def encode(self, lines: Iterable[str], lang: str) -> Iterator[str]:
        """``lines`` encoded, one at a time and in order."""
        ...

    def decode(self, line: str, lang: str) -> str: ...

    def generate_options(self, folder: Path, source: str) -> list[str]:
        """fairseq-generate/-interactive options that print detokenised D- lines."""
        ...


class MosesTokens:
    """What the ``word`` and ``bpe`` schemes share: Moses tokenisation, only for languages it knows."""

    name: str

    def use_languages(self, langs: tuple[str, str]) -> None:
        unknown = [lang for lang in langs if lang not in moses_languages()]
        if unknown:
            raise DataError(
                f"the {self.name} scheme tokenises with Moses (sacremoses), which does not know "
                f"{', '.join(unknown)}: use --scheme spm, which serves every script"
            )

    def manifest_entries(self) -> dict[str, Any]:
        return {}


def moses_tokenize(lines: list[str], lang: str) -> list[str]:
    tokenizer = moses_tokenizer(lang)
    return [tokenizer.tokenize(line, escape=False, return_str=True) for line in lines]


@functools.cache
def moses_tokenizer(lang: str) -> Any:
    """sacremoses' tokenizer of ``lang``, built once per process (it reads its prefix lists)."""
    from sacremoses import MosesTokenizer

    return MosesTokenizer(lang)


def moses_tokenize_stream(lines: Iterable[str], lang: str, workers: int) -> Iterator[str]:
    """Moses tokenisation of ``lines`` in chunks of ``MOSES_CHUNK`` lines, in order: on ``workers``
    processes, ``MOSES_AHEAD`` chunks per worker in flight (small chunks, so that the workers end
    together), where there is more than one chunk; in this process otherwise."""
    chunks = batches(lines, MOSES_CHUNK)
    first, second = next(chunks, []), next(chunks, None)
    if workers <= 1 or second is None:
        for chunk in chain([first], [] if second is None else [second], chunks):
            yield from moses_tokenize(chunk, lang)
        return
    with ProcessPoolExecutor(workers) as pool:
        pending: deque[Future[list[str]]] = deque()
        for chunk in chain([first, second], chunks):
            pending.append(pool.submit(moses_tokenize, chunk, lang))
            if len(pending) > MOSES_AHEAD * workers:
                yield from pending.popleft().result()
        while pending:
            yield from pending.popleft().result()


def sample(lines: Iterable[str], size: int, seed: int) -> list[str]:
    """Every line, in order, when there are at most ``size``; else a uniform sample of ``size`` of them
    (reservoir sampling: memory holds the sample) drawn with a generator seeded with ``seed``."""
    chosen: list[str] = []
    draw = random.Random(seed).random
    for index, line in enumerate(lines):
        if index < size:
            chosen.append(line)
        elif (slot := int(draw() * (index + 1))) < size:
            chosen[slot] = line
    return chosen


def batches(lines: Iterable[str], size: int) -> Iterator[list[str]]:
    """``lines`` in lists of ``size`` (the last one shorter)."""
    stream = iter(lines)
    while batch := list(islice(stream, size)):
        yield batch


def moses_detokenize(line: str, lang: str) -> str:
    from sacremoses import MosesDetokenizer

    return MosesDetokenizer(lang).detokenize(line.split())


class WordScheme(MosesTokens):
    name = WORD

    def __init__(self, workers: int = os.cpu_count() or 1) -> None:
        self.workers = workers

    def learn(self, train: dict[str, Iterable[str]], folder: Path) -> None:
        """Nothing to learn: the shortlist is made by binarisation."""

    def encode(self, lines: Iterable[str], lang: str) -> Iterator[str]:
        return moses_tokenize_stream(lines, lang, self.workers)

    def decode(self, line: str, lang: str) -> str:
        return moses_detokenize(line, lang)

    def generate_options(self, folder: Path, source: str) -> list[str]:
        return ["--tokenizer", "moses"]


class BPEScheme(MosesTokens):
    name = BPE

    def __init__(self, merges: int = 32000, joint: bool = True, workers: int = os.cpu_count() or 1) -> None:
        self.merges, self.joint, self.workers = merges, joint, workers
        self.codes: dict[str, Path] = {}

    def learn(self, train: dict[str, Iterable[str]], folder: Path) -> None:
        """subword-nmt learns from the word counts of the tokenised text, which it reads once."""
        from subword_nmt.learn_bpe import learn_bpe

        groups = {"joint": tuple(train)} if self.joint else {lang: (lang,) for lang in train}
        for name, langs in groups.items():
            codes = folder / f"bpe.{name}.codes"
            if not codes.exists():
                text = (line for lang in langs for line in moses_tokenize_stream(train[lang], lang, self.workers))
                temporary = codes.with_name(codes.name + ".part")
                with open(temporary, "w", encoding="utf-8") as out:
                    learn_bpe(text, out, self.merges, min_frequency=2)
                os.replace(temporary, codes)
            for lang in langs:
                self.codes[lang] = codes

    def encode(self, lines: Iterable[str], lang: str) -> Iterator[str]:
        from subword_nmt.apply_bpe import BPE

        with open(self.codes[lang], encoding="utf-8") as codes:
            bpe = BPE(codes)
        return (bpe.process_line(line) for line in moses_tokenize_stream(lines, lang, self.workers))

    def decode(self, line: str, lang: str) -> str:
        return moses_detokenize((line + " ").replace("@@ ", "").strip(), lang)

    def generate_options(self, folder: Path, source: str) -> list[str]:
        codes = folder / ("bpe.joint.codes" if self.joint else f"bpe.{source}.codes")  # encodes the source
        return ["--tokenizer", "moses", "--bpe", "subword_nmt", "--bpe-codes", str(codes)]


class SentencePieceScheme:
    name = SPM

    def __init__(self, vocab_size: int = 8000, model_type: str = "unigram", workers: int = os.cpu_count() or 1) -> None:
        self.vocab_size, self.model_type, self.workers = vocab_size, model_type, workers
        self.model: Path | None = None
        self.character_coverage = 1.0

    def use_languages(self, langs: tuple[str, str]) -> None:
        """Every script is served; the character coverage follows the languages."""
        self.character_coverage = 0.9995 if LARGE_CHARACTER_SETS & set(langs) else 1.0

    def manifest_entries(self) -> dict[str, Any]:
        return {"character_coverage": self.character_coverage}

    def learn(self, train: dict[str, Iterable[str]], folder: Path) -> None:
        """sentencepiece trains on every line of a corpus of at most ``SAMPLE`` lines, else on a
        uniform sample of ``SAMPLE`` of them, drawn with a fixed seed (the same every run)."""
        import sentencepiece

        self.model = folder / "spm.model"
        if self.model.exists():
            return
        prefix = folder / "spm.part"
        lines = sample((line for lang in sorted(train) for line in train[lang]), SAMPLE, SEED)  # both directions: one model
        sentencepiece.set_random_generator_seed(SEED)
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=iter(lines),
            model_prefix=str(prefix),
            vocab_size=self.vocab_size,
            model_type=self.model_type,
            character_coverage=self.character_coverage,
            num_threads=self.workers,
            input_sentence_size=WHOLE,
            shuffle_input_sentence=True,
            minloglevel=2,
        )
        os.replace(f"{prefix}.vocab", folder / "spm.vocab")
        os.replace(f"{prefix}.model", self.model)

    @functools.cached_property
    def processor(self) -> Any:
        """The learned model, loaded once (after ``learn``)."""
        import sentencepiece

        return sentencepiece.SentencePieceProcessor(model_file=str(self.model))

    def encode(self, lines: Iterable[str], lang: str) -> Iterator[str]:
        for chunk in batches(lines, CHUNK):
            yield from (" ".join(pieces) for pieces in self.processor.encode(chunk, out_type=str, num_threads=self.workers))

    def decode(self, line: str, lang: str) -> str:
        return self.processor.decode(line.split())

    def generate_options(self, folder: Path, source: str) -> list[str]:
        return ["--bpe", "sentencepiece", "--sentencepiece-model", str(folder / "spm.model")]
