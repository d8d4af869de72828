"""tooling/statistical_alignments.py (eflomal beside RNNsearch): the training text brought
to the alignment gold's tokenisation, checked on hand-written lines and on the gold itself; eflomal
run for real on 2,000 Hansards pairs, prepared as prepare_data.py's word scheme writes them: the
gold's links (in the gold's orientation, each symmetrisation, far better than the diagonal) and
the training pairs' own links (line for line, in the prepared folder's direction, linking the
words both sides share)."""

import gzip
import importlib.util
import json
import sys
from itertools import islice
from pathlib import Path

import pytest
from conftest import REPO, SHARED_DATA

from rnnsearch_plugin.analysis.aer import alignment_error_rate, diagonal_links, read_naacl
from rnnsearch_plugin.analysis.links import parse_pharaoh_line
from rnnsearch_plugin.data.schemes import moses_tokenize
from rnnsearch_plugin.data.textio import read_lines

sys.path.insert(0, str(REPO / "tooling"))
import statistical_alignments  # noqa: E402

GOLD = Path(SHARED_DATA) / "alignment-gold"
PAIRS = 2000
needs_eflomal = pytest.mark.skipif(
    importlib.util.find_spec("eflomal") is None, reason="eflomal is not installed: pip install '.[results]' (scripts/setup.sh installs it)"
)

# Moses-tokenised (as prepare_data's word scheme writes them) -> the gold's tokenisation
FRENCH = [
    (
        "C' est aujourd' hui qu' il l' a dit au président des Communes , s' il vient jusqu' à la Colombie-Britannique .",
        "ce est aujourd' hui que il le a dit à le président de les communes , si il vient jusque à la colombie - britannique .",
    ),
    (
        "Il n' y a pas d' accord du tout aux Communes ; lorsqu' elle s' applique , j' en doute , m' a-t-il dit .",
        "il ne y a pas de accord de le tout à les communes ; lorsque elle se applique , je en doute , me a - t - il dit .",
    ),
    (
        "L' article 3-1 , dû à quelqu' un , auquel -même le projet de loi C-49 : 25 000 $ .",
        "le article 3 - 1 , dû à quelque un , auquel -même le projet de loi c - 49 : 25 000 $ .",
    ),
]
ENGLISH = [
    (
        "The Cut-backs in Bill C-49 aren 't in Des Moines , du Mr. Speaker 's view .",
        "the cut - backs in bill c - 49 aren 't in des moines , du mr. speaker 's view .",
    ),
]


@pytest.mark.parametrize(("lang", "line", "expected"), [("fr", *pair) for pair in FRENCH] + [("en", *pair) for pair in ENGLISH])
def test_training_text_is_brought_to_the_golds_tokenisation(lang, line, expected):
    assert statistical_alignments.normalise(line, lang) == expected


def test_the_golds_own_sentences_pass_through_unchanged_but_for_case():
    """The gold already follows every rule: a rule it breaks (l' -> la, say, or "des" kept) would change it."""
    for lang, name in (("en", "dev.e"), ("fr", "dev.f")):
        for line in read_lines(GOLD / name):
            assert statistical_alignments.normalise(line, lang) == " ".join(line.lower().split())


@pytest.fixture(scope="module")
def hansards() -> dict[str, list[str]]:
    return hansards_pairs()


def hansards_pairs() -> dict[str, list[str]]:
    """{lang: the first 2,000 Hansards pairs of at least 3 words a side, Moses-tokenised}, as the
    word scheme writes word/train.{en,fr}."""
    sides = []
    for lang in ("en", "fr"):
        with gzip.open(Path(SHARED_DATA) / "hansards" / f"hansard.36.1.house.{lang}.gz", "rt", encoding="utf-8") as handle:
            sides.append([line.strip() for line in islice(handle, 3 * PAIRS)])
    pairs = [(en, fr) for en, fr in zip(*sides) if min(len(en.split()), len(fr.split())) >= 3][:PAIRS]
    assert len(pairs) == PAIRS
    return {lang: moses_tokenize(list(side), lang) for lang, side in zip(("en", "fr"), zip(*pairs))}


def prepared_folder(folder: Path, hansards: dict[str, list[str]], langs: tuple[str, str], scheme: str = "word") -> Path:
    """A folder as prepare_data.py leaves it, for what this script reads: word/train.{en,fr} and
    manifest.json naming the direction."""
    (folder / "word").mkdir(parents=True)
    for lang, lines in hansards.items():
        (folder / "word" / f"train.{lang}").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    manifest = {"corpus": "hansards", "source_lang": langs[0], "target_lang": langs[1], "scheme": scheme}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def run(monkeypatch, *options: object) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # main sets it for eflomal; monkeypatch puts it back
    monkeypatch.setattr(sys, "argv", ["statistical_alignments.py", *map(str, options)])
    statistical_alignments.main()


def links_of(path: Path, sources: list[str], targets: list[str]) -> list[set[tuple[int, int]]]:
    """Each line's links, refused (ValueError) if one lies outside its pair."""
    lines = read_lines(path)
    assert len(lines) == len(sources) == len(targets), path
    return [
        {link for link, _ in parse_pharaoh_line(line, f"{path}:{number}", len(source.split()), len(target.split()))}
        for number, (line, source, target) in enumerate(zip(lines, sources, targets), 1)
    ]


@needs_eflomal
def test_eflomal_aligns_the_gold_in_its_orientation_and_symmetrises_it(hansards, tmp_path, monkeypatch):
    prepared = prepared_folder(tmp_path / "fr-en", hansards, ("fr", "en"))  # the gold stays English-French
    run(monkeypatch, "--prepared", prepared, "--gold", GOLD, "--out", tmp_path / "out")
    english, french = read_lines(GOLD / "dev.e"), read_lines(GOLD / "dev.f")
    found = {name: links_of(tmp_path / "out" / f"eflomal.{name}", english, french) for name in statistical_alignments.OUTPUTS}
    for forward, reverse, intersect, union, grown in zip(*found.values()):
        assert len({j for _, j in forward}) == len(forward)  # forward: each French word from one English word
        assert len({i for i, _ in reverse}) == len(reverse)  # reverse: each English word to one French word
        assert intersect == forward & reverse and union == forward | reverse and intersect <= grown <= union
    gold = read_naacl(GOLD / "dev.wa.nonullalign")
    diagonal = {n: diagonal_links(len(e.split()), len(f.split())) for n, (e, f) in enumerate(zip(english, french), 1)}
    for name, sentences in found.items():  # the gold's own lines, read as the gold reads them (from 1): far above the diagonal's 0.59
        predicted = {n: {(i + 1, j + 1) for i, j in links} for n, links in enumerate(sentences, 1)}
        assert alignment_error_rate(predicted, gold)["aer"] < alignment_error_rate(diagonal, gold)["aer"] - 0.15, name
    report = json.loads((tmp_path / "out" / "eflomal.json").read_text())
    assert (report["training_pairs"], report["gold_pairs"], report["source"], report["threads"]) == (PAIRS, 37, "en", 1)
    assert set(report["seconds"]) == set(report["cpu_seconds"]) == {"read and normalise", "align forward", "align reverse", "symmetrise"}


def shared_words(source: str, target: str) -> set[tuple[int, int]]:
    """(i, j) of each word written alike and once on both sides (numbers, names, punctuation): the
    links any aligner should find, as a check independent of eflomal's."""
    source_words, target_words = source.lower().split(), target.lower().split()
    return {
        (source_words.index(word), target_words.index(word))
        for word in set(source_words) & set(target_words)
        if source_words.count(word) == target_words.count(word) == 1
    }


@needs_eflomal
@pytest.mark.parametrize(("langs", "symmetrisation"), [(("en", "fr"), "grow-diag-final-and"), (("fr", "en"), "forward")])
def test_training_alignments_link_each_prepared_pair_in_its_direction(hansards, tmp_path, monkeypatch, langs, symmetrisation):
    prepared = prepared_folder(tmp_path / "-".join(langs), hansards, langs)
    out = tmp_path / "train.align"
    run(monkeypatch, "--prepared", prepared, "--training-alignments", out, "--symmetrisation", symmetrisation)
    sources, targets = hansards[langs[0]], hansards[langs[1]]
    found = links_of(out, sources, targets)  # line for line, every link within its pair, the source word first
    anchors = [shared_words(source, target) for source, target in zip(sources, targets)]
    kept = sum(len(links & anchor) for links, anchor in zip(found, anchors)) / sum(map(len, anchors))
    assert kept > 0.9 and sum(map(len, anchors)) > 2 * PAIRS  # a transposed file would miss them
    if symmetrisation == "forward":
        assert all(len({j for _, j in links}) == len(links) for links in found)  # each target word from one source word
    report = json.loads(out.with_name("train.align.json").read_text())
    assert (report["training_pairs"], report["source"], report["target"]) == (PAIRS, *langs)
    assert report["links"] == sum(map(len, found)) and report["symmetrisation"] == symmetrisation


@needs_eflomal
@pytest.mark.parametrize(
    ("problem", "fragment"),
    [
        ("no folder", "prepare the corpus first"),
        ("no gold", "no alignment gold"),
        ("bpe", "word links need --scheme word"),
        ("short side", "prepare the folder again"),
    ],
)
def test_bad_input_ends_in_one_line(problem, fragment, hansards, tmp_path, monkeypatch):
    prepared = prepared_folder(tmp_path / "prepared", hansards, ("en", "fr"), "bpe" if problem == "bpe" else "word")
    if problem == "short side":
        (prepared / "word" / "train.fr").write_text("".join(line + "\n" for line in hansards["fr"][:-1]), encoding="utf-8")
    gold = tmp_path / "nowhere" if problem == "no gold" else GOLD
    options = ("--gold", gold, "--out", tmp_path / "out") if problem == "no gold" else ("--training-alignments", tmp_path / "out" / "a")
    with pytest.raises(SystemExit) as exit:
        run(monkeypatch, "--prepared", tmp_path / "nowhere" if problem == "no folder" else prepared, *options)
    assert str(exit.value).startswith("statistical_alignments.py: error: ") and fragment in str(exit.value)
    assert "\n" not in str(exit.value) and not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ((), "give --gold GOLD --out OUT"),
        (("--gold", GOLD), "--gold and --out go together"),
        (("--training-alignments", "a", "--threads", "0"), "--threads 1 or more"),
        (("--training-alignments", "a", "--aligner", "fast_align", "--threads", "2"), "--threads is eflomal's"),
    ],
)
def test_options_say_what_to_give(options, fragment, tmp_path, monkeypatch, capsys):
    with pytest.raises(SystemExit) as exit:
        run(monkeypatch, "--prepared", tmp_path, *options)
    assert exit.value.code == 2 and fragment in capsys.readouterr().err
