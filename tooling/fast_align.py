"""fast_align's model in numpy: Dyer, Chahuneau & Smith (2013), "A Simple, Fast, and Effective
Reparameterization of IBM Model 2" (NAACL), written from the paper's equations, with the flags
fast_align is usually run with (-d -o -v) as the defaults (``Settings``); ``run_fast_align`` has
``rnnsearch_plugin.data.word_links.run_eflomal``'s contract, so that
``tooling/statistical_alignments.py --aligner fast_align`` puts it beside eflomal.

The model (section 2). A target sentence f of m words is generated from a source sentence e of n
words and NULL (e_0); each target word i (1..m) chooses its source position a_i (0..n, 0 NULL)
independently of the others, then is drawn from theta(f_i | e_{a_i}):

    delta(a_i = j | i, m, n) = p0                                            if j = 0
                             = (1 - p0) exp(lambda h(i, j, m, n)) / Z_lambda(i, m, n)   if 0 < j <= n
    h(i, j, m, n) = -|i/m - j/n|        Z_lambda(i, m, n) = sum_{j'=1..n} exp(lambda h(i, j', m, n))

(-d, "favour the diagonal": h; p0 = 0.08, the initial tension lambda = 4). The words being
independent, p(f_i | e) = sum_j delta(a_i = j | i, m, n) theta(f_i | e_j) and the posterior of
each link is p(a_i = j | f, e) = delta(a_i = j | i, m, n) theta(f_i | e_j) / p(f_i | e)
(section 3). The paper sums Z_lambda in constant time, as two geometric series, for it is needed
once a target word; here it is summed over j directly, once per (i, m, n) and pass, the sentences
being grouped by their lengths (m, n): exact, and no cost beside the links.

Learning (section 3), EM, one pass over the corpus per iteration:
- E step: the posteriors q(i, j) of every pair, their sums over the corpus, the expected counts
  E[c(e, f)] (theta is held only for the pairs of words that co-occur, NULL included, as sorted
  keys e * V_f + f; each link keeps its pair's index, int32);
- M step for theta, -v (variational Bayes, a symmetric Dirichlet prior alpha = 0.01 on each
  theta(. | e), the usual mean-field update):
  theta(f | e) = exp(digamma(E[c(e, f)] + alpha)) / exp(digamma(sum_f' E[c(e, f')] + V_e alpha)),
  V_e the number of target words that co-occur with e (the words theta(. | e) can give mass to
  in this corpus: the prior's other words are never read);
- M step for lambda, -o: the expected log-likelihood of the alignments under the posteriors,
  Q(lambda) = sum q(i, j) log delta(a_i = j | i, m, n), is concave in lambda, and
  dQ/dlambda = sum_{i, j>0} q(i, j) h(i, j, m, n) - sum_i (1 - q(i, 0)) E_lambda[h | i, m, n],
  the feature expected under the posterior less that expected under the model (section 3);
  ``Settings.tension_steps`` gradient steps of ``tension_step`` times dQ/dlambda per target word,
  lambda kept within ``tension_range``, a step halved while it would lower Q.
Five passes (fast_align's default) as fast_align runs them: the first with theta uniform, so that
its posteriors are delta itself (and dQ/dlambda is 0 after it: lambda moves from the second on);
the first four each followed by the M step; the fifth only reads the Viterbi alignments (theta
updated four times, lambda three). Viterbi: each target word to argmax_j delta(a_i = j) theta(f_i |
e_j), the first of equal ones, NULL first; a word whose argmax is NULL stays unaligned.

p0 stays fixed, as fast_align keeps it. Words are counted lowercased, as eflomal counts them
(fast_align's program does not lowercase): the two aligners see the same vocabulary.

The module follows the paper, not fast_align's C++ code (clab/fast_align, read only for its
defaults and its schedule, none of it copied), which differs from the paper in the tension's
gradient: some versions normalise the model's expected feature with Z(i, n, m), the two lengths
swapped; the posterior's expected feature is taken at the 0-based target position, (i - 1)/m,
where delta uses i/m; and the model's expectation counts every target word fully, not weighted by
its posterior off NULL. Its links can therefore differ slightly from this module's.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

BLOCK_LINKS = 1 << 20  # the most links (target word x source position, NULL included) computed at once
CHUNK_LINKS = 1 << 24  # the most links whose posteriors are kept before counting them (8 bytes each)
DIGAMMA_SHIFT = 6  # digamma(x) = digamma(x + 6) - sum 1/(x + k): the series is exact to 1e-11 from 6 on
DIRECTIONS = ("forward", "reverse")  # forward: each target word to at most one source word; reverse: the other way


@dataclass(frozen=True)
class Settings:
    """fast_align -d -o -v with its defaults (-I 5, -p 0.08, -T 4, -a 0.01); the tension's steps as
    fast_align takes them."""

    iterations: int = 5  # passes over the corpus, the last one reading the Viterbi alignments only
    p0: float = 0.08  # delta(a_i = 0): NULL
    tension: float = 4.0  # lambda's initial value
    optimise_tension: bool = True  # -o
    alpha: float = 0.01  # -v: the symmetric Dirichlet prior's concentration
    tension_steps: int = 8  # gradient steps on lambda after each pass
    tension_step: float = 20.0  # lambda += tension_step * dQ/dlambda per target word
    tension_range: tuple[float, float] = (0.1, 14.0)


SETTINGS = Settings()


@dataclass(frozen=True)
class Block:
    """Sentences of one shape (m target words, n source words), whose links lie at
    ``Corpus.links[start:stop]`` as a (sentences, m, n + 1) array, source position 0 NULL."""

    start: int
    m: int
    n: int
    sentences: np.ndarray  # their numbers in the corpus

    @property
    def shape(self) -> tuple[int, int, int]:
        return len(self.sentences), self.m, self.n + 1

    @property
    def stop(self) -> int:
        return self.start + len(self.sentences) * self.m * (self.n + 1)


@dataclass(frozen=True)
class Chunk:
    """Consecutive blocks whose posteriors are counted together."""

    blocks: list[Block]

    @property
    def start(self) -> int:
        return self.blocks[0].start

    @property
    def stop(self) -> int:
        return self.blocks[-1].stop

    def view(self, values: np.ndarray, block: Block) -> np.ndarray:
        """``block``'s part of ``values`` (one value per link of the chunk), (sentences, m, n + 1)."""
        return values[block.start - self.start : block.stop - self.start].reshape(block.shape)


@dataclass
class Corpus:
    """Sentence pairs as the model reads them: the source words (0 NULL), the target words, the
    pairs of words that co-occur (``pair_source``, ``pair_target``, sorted by source word), and
    each link's pair (``links``) in blocks of one shape."""

    source_words: list[str | None]  # id -> word; 0: NULL (None)
    target_words: list[str]
    pair_source: np.ndarray  # int32, per pair of co-occurring words
    pair_target: np.ndarray  # int32
    links: np.ndarray  # int32, per link: its pair
    chunks: list[Chunk]
    target_starts: np.ndarray  # each sentence's first target word among all the corpus's target words
    target_lengths: np.ndarray
    support: np.ndarray = field(init=False)  # V_e: the target words that co-occur with each source word

    def __post_init__(self) -> None:
        self.support = np.bincount(self.pair_source, minlength=len(self.source_words))


@dataclass
class Expectations:
    """What an E step gathers: E[c(e, f)] per pair, the posteriors summed per shape ({(m, n): an m x
    (n + 1) array, source position 0 NULL}) and the corpus's log-likelihood, log p(f | e)."""

    counts: np.ndarray
    shapes: dict[tuple[int, int], np.ndarray]
    log_likelihood: float


def encoded(lines: list[str], first: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(every word's id, int32, the lines' words one after another; each line's length; id -> word,
    from ``first``), the words lowercased."""
    vocabulary: dict[str, int] = {}
    lengths = np.empty(len(lines), dtype=np.int64)
    ids: list[int] = []
    for number, line in enumerate(lines):
        words = line.lower().split()
        lengths[number] = len(words)
        ids.extend(vocabulary.setdefault(word, len(vocabulary) + first) for word in words)
    return np.array(ids, dtype=np.int32), lengths, list(vocabulary)


def starts(lengths: np.ndarray) -> np.ndarray:
    """Each line's first word among all the lines' words."""
    return np.cumsum(lengths) - lengths


def shaped_chunks(target_lengths: np.ndarray, source_lengths: np.ndarray) -> list[Chunk]:
    """The pairs with words on both sides, grouped by shape (m, n) into blocks of at most
    BLOCK_LINKS links (or one sentence), consecutive blocks into chunks of at most CHUNK_LINKS."""
    usable = np.flatnonzero((target_lengths > 0) & (source_lengths > 0))
    order = usable[np.lexsort((source_lengths[usable], target_lengths[usable]))]
    shapes = np.stack([target_lengths[order], source_lengths[order]], axis=1)
    edges = np.flatnonzero(np.any(shapes[1:] != shapes[:-1], axis=1)) + 1
    blocks, start = [], 0
    for sentences in np.split(order, edges) if len(order) else []:
        m, n = int(target_lengths[sentences[0]]), int(source_lengths[sentences[0]])
        per_block = max(1, BLOCK_LINKS // (m * (n + 1)))
        for first in range(0, len(sentences), per_block):
            blocks.append(Block(start, m, n, sentences[first : first + per_block]))
            start = blocks[-1].stop
    chunks: list[list[Block]] = []
    for block in blocks:
        if not chunks or block.stop - chunks[-1][0].start > CHUNK_LINKS:
            chunks.append([])
        chunks[-1].append(block)
    return [Chunk(chunk) for chunk in chunks]


def corpus(sources: list[str], targets: list[str]) -> Corpus:
    """The model's corpus of (source, target) lines, words split on spaces."""
    if len(sources) != len(targets):
        raise ValueError(f"{len(sources)} source lines and {len(targets)} target lines: one of each per sentence pair")
    source_ids, source_lengths, source_words = encoded(sources, first=1)
    target_ids, target_lengths, target_words = encoded(targets, first=0)
    source_starts, target_starts = starts(source_lengths), starts(target_lengths)
    chunks = shaped_chunks(target_lengths, source_lengths)

    def keys(block: Block) -> np.ndarray:
        """Each link's pair of words, source * V_f + target, (sentences, m, n + 1)."""
        source = np.zeros((len(block.sentences), block.n + 1), dtype=np.int64)  # column 0: NULL
        source[:, 1:] = source_ids[source_starts[block.sentences][:, None] + np.arange(block.n)]
        target = target_ids[target_starts[block.sentences][:, None] + np.arange(block.m)]
        return source[:, None, :] * len(target_words) + target[:, :, None]

    links, pairs = pair_index(chunks, keys)
    return Corpus(
        source_words=[None, *source_words],
        target_words=target_words,
        pair_source=(pairs // max(1, len(target_words))).astype(np.int32),
        pair_target=(pairs % max(1, len(target_words))).astype(np.int32),
        links=links,
        chunks=chunks,
        target_starts=target_starts,
        target_lengths=target_lengths,
    )


def pair_index(chunks: list[Chunk], keys: Callable[[Block], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(each link's index among the sorted distinct keys, int32; those keys), ``keys(block)`` giving
    a block's: the chunks' distinct keys merged four chunks at a time, then each chunk's keys mapped
    onto them, so that the keys of all links are never held at once."""
    pairs, pending = np.empty(0, dtype=np.int64), []
    for chunk in chunks:
        pending.append(np.unique(chunk_keys(chunk, keys)))
        if len(pending) == 4 or chunk is chunks[-1]:
            pairs, pending = np.unique(np.concatenate([pairs, *pending])), []
    links = np.empty(chunks[-1].stop if chunks else 0, dtype=np.int32)
    for chunk in chunks:
        unique, inverse = np.unique(chunk_keys(chunk, keys), return_inverse=True)
        links[chunk.start : chunk.stop] = np.searchsorted(pairs, unique).astype(np.int32)[inverse]
    return links, pairs


def chunk_keys(chunk: Chunk, keys: Callable[[Block], np.ndarray]) -> np.ndarray:
    return np.concatenate([keys(block).ravel() for block in chunk.blocks])


def diagonal_feature(m: int, n: int) -> np.ndarray:
    """h(i, j, m, n) = -|i/m - j/n| for i = 1..m (rows), j = 1..n (columns)."""
    return -np.abs(np.arange(1, m + 1)[:, None] / m - np.arange(1, n + 1)[None, :] / n)


def alignment_distribution(m: int, n: int, tension: float, p0: float) -> np.ndarray:
    """delta(a_i = j | i, m, n) for i = 1..m (rows) and j = 0..n (columns, 0 NULL)."""
    weights = np.exp(tension * diagonal_feature(m, n))
    delta = np.empty((m, n + 1))
    delta[:, 0] = p0
    delta[:, 1:] = (1 - p0) * weights / weights.sum(axis=1, keepdims=True)
    return delta


def posterior_chunks(data: Corpus, theta: np.ndarray, tension: float, p0: float) -> Iterator[tuple[Chunk, np.ndarray, float]]:
    """Each chunk with the posterior p(a_i = j | f, e) of each of its links (``Chunk.view`` shapes a
    block's) and its pairs' log-likelihood; the array is reused for the next chunk."""
    buffer = np.empty(max((chunk.stop - chunk.start for chunk in data.chunks), default=0))
    delta: dict[tuple[int, int], np.ndarray] = {}
    for chunk in data.chunks:
        log_likelihood = 0.0
        for block in chunk.blocks:
            joint = chunk.view(buffer, block)
            np.take(theta, data.links[block.start : block.stop].reshape(block.shape), out=joint, mode="clip")
            if (block.m, block.n) not in delta:
                delta[block.m, block.n] = alignment_distribution(block.m, block.n, tension, p0)
            joint *= delta[block.m, block.n]
            marginal = joint.sum(axis=2, keepdims=True)  # p(f_i | e)
            joint /= marginal
            log_likelihood += float(np.log(marginal).sum())
        yield chunk, buffer[: chunk.stop - chunk.start], log_likelihood


def expectations(data: Corpus, theta: np.ndarray, tension: float, p0: float) -> Expectations:
    """The E step under ``theta`` (one value per pair) and ``tension``."""
    found = Expectations(np.zeros(len(data.pair_source)), {}, 0.0)
    for chunk, posterior, log_likelihood in posterior_chunks(data, theta, tension, p0):
        found.counts += np.bincount(data.links[chunk.start : chunk.stop], posterior, minlength=len(found.counts))
        for block in chunk.blocks:
            summed = chunk.view(posterior, block).sum(axis=0)
            shape = (block.m, block.n)
            found.shapes[shape] = found.shapes[shape] + summed if shape in found.shapes else summed
        found.log_likelihood += log_likelihood
    return found


def digamma(values: np.ndarray) -> np.ndarray:
    """The digamma function of positive values: shifted by DIGAMMA_SHIFT, then its asymptotic series
    ln x - 1/2x - 1/12x^2 + 1/120x^4 - 1/252x^6 + 1/240x^8 - 1/132x^10."""
    x = np.array(values, dtype=np.float64)
    result = np.zeros_like(x)
    for _ in range(DIGAMMA_SHIFT):
        result -= 1 / x
        x += 1
    square = 1 / (x * x)
    series = square * (1 / 12 - square * (1 / 120 - square * (1 / 252 - square * (1 / 240 - square / 132))))
    return result + np.log(x) - 0.5 / x - series


def variational_update(data: Corpus, counts: np.ndarray, alpha: float) -> np.ndarray:
    """-v's M step: theta(f | e) = exp(digamma(E[c(e, f)] + alpha) - digamma(sum_f' E[c(e, f')] + V_e alpha)),
    computed a slice at a time."""
    totals = np.bincount(data.pair_source, counts, minlength=len(data.source_words)) + alpha * data.support
    normaliser = digamma(np.maximum(totals, alpha))  # a source word without pairs: any positive value
    theta = np.empty_like(counts)
    for first in range(0, len(counts), BLOCK_LINKS):
        part = slice(first, first + BLOCK_LINKS)
        theta[part] = np.exp(digamma(counts[part] + alpha) - normaliser[data.pair_source[part]])
    return theta


@dataclass(frozen=True)
class Positions:
    """The E step's posteriors per position, flattened over the shapes: one entry per (m, n, i, j > 0),
    its h and expected links; one row per (m, n, i), its expected links off NULL; those to NULL."""

    feature: np.ndarray
    expected: np.ndarray
    row: np.ndarray
    row_expected: np.ndarray
    null_expected: float

    @property
    def target_words(self) -> float:
        return float(self.row_expected.sum()) + self.null_expected


def positions(shapes: dict[tuple[int, int], np.ndarray]) -> Positions:
    """``Expectations.shapes`` as ``Positions``."""
    features, expected, rows, row_expected, null, first_row = [], [], [], [], 0.0, 0
    for (m, n), summed in shapes.items():
        features.append(diagonal_feature(m, n).ravel())
        expected.append(summed[:, 1:].ravel())
        rows.append(np.repeat(np.arange(first_row, first_row + m), n))
        row_expected.append(summed[:, 1:].sum(axis=1))
        null += float(summed[:, 0].sum())
        first_row += m
    flat = [np.concatenate(parts) if parts else np.empty(0) for parts in (features, expected, rows, row_expected)]
    return Positions(flat[0], flat[1], flat[2].astype(np.int64), flat[3], null)


def alignment_objective(found: Positions, tension: float, p0: float) -> tuple[float, float]:
    """(Q(lambda), dQ/dlambda): the expected log-likelihood of the alignments under the posteriors,
    sum q(i, j) log delta(a_i = j | i, m, n), and its derivative (the module's docstring)."""
    weights = np.exp(tension * found.feature)
    z = np.bincount(found.row, weights, minlength=len(found.row_expected))  # every row has n >= 1 entries
    model_feature = np.bincount(found.row, weights * found.feature, minlength=len(found.row_expected)) / z
    posterior_feature = float(found.expected @ found.feature)
    objective = (
        found.null_expected * np.log(p0)
        + float(found.row_expected.sum()) * np.log(1 - p0)
        + tension * posterior_feature
        - float(found.row_expected @ np.log(z))
    )
    return float(objective), posterior_feature - float(found.row_expected @ model_feature)


def optimised_tension(shapes: dict[tuple[int, int], np.ndarray], tension: float, settings: Settings = SETTINGS) -> float:
    """-o: lambda after ``settings.tension_steps`` gradient steps on Q (a step halved while it
    would lower Q), within ``settings.tension_range``."""
    found = positions(shapes)
    if not found.target_words:
        return tension
    low, high = settings.tension_range
    objective, gradient = alignment_objective(found, tension, settings.p0)
    for _ in range(settings.tension_steps):
        step = settings.tension_step * gradient / found.target_words
        for _ in range(50):
            candidate = min(max(tension + step, low), high)
            moved = alignment_objective(found, candidate, settings.p0)
            if moved[0] >= objective:
                break
            step /= 2
        else:  # no step along the gradient raises Q: lambda is where Q is highest
            return tension
        tension, (objective, gradient) = candidate, moved
    return tension


@dataclass(frozen=True)
class Model:
    """What training leaves: theta per pair, lambda, and each pass's log-likelihood."""

    theta: np.ndarray
    tension: float
    log_likelihoods: list[float]


def train(data: Corpus, settings: Settings = SETTINGS) -> Model:
    """``settings.iterations - 1`` EM iterations from theta uniform (the module's docstring)."""
    theta, tension, log_likelihoods = np.ones(len(data.pair_source)), settings.tension, []
    for _ in range(settings.iterations - 1):
        found = expectations(data, theta, tension, settings.p0)
        if settings.optimise_tension:
            tension = optimised_tension(found.shapes, tension, settings)
        theta = variational_update(data, found.counts, settings.alpha)
        log_likelihoods.append(found.log_likelihood)
    return Model(theta, tension, log_likelihoods)


def viterbi(data: Corpus, model: Model, p0: float) -> np.ndarray:
    """Each target word's source word (0-based, among all the corpus's target words), -1 for NULL
    or no source word."""
    best = np.full(int(data.target_lengths.sum()), -1, dtype=np.int64)
    for chunk, posterior, _ in posterior_chunks(data, model.theta, model.tension, p0):
        for block in chunk.blocks:
            where = data.target_starts[block.sentences][:, None] + np.arange(block.m)
            best[where] = chunk.view(posterior, block).argmax(axis=2) - 1
    return best


def pharaoh_lines(data: Corpus, best: np.ndarray, reverse: bool) -> Iterator[str]:
    """Each pair's Viterbi links, "i-j" with i the file's source word: the model's target word when
    ``reverse``, else its source word."""
    for start, length in zip(data.target_starts.tolist(), data.target_lengths.tolist()):
        chosen = best[start : start + length].tolist()
        yield " ".join(f"{i}-{j}" if reverse else f"{j}-{i}" for i, j in enumerate(chosen) if j >= 0)


def run_fast_align(sources: list[str], targets: list[str], direction: str, path: Path, settings: Settings = SETTINGS) -> None:
    """fast_align's links of every pair of (tokenised) lines in ``direction`` ("forward": each target
    word to at most one source word; "reverse": each source word to at most one target word, the
    model trained the other way), written to PATH in source-target order, as ``run_eflomal``."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
    reverse = direction == "reverse"
    data = corpus(targets, sources) if reverse else corpus(sources, targets)
    model = train(data, settings)
    best = viterbi(data, model, settings.p0)
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.writelines(line + "\n" for line in pharaoh_lines(data, best, reverse))
