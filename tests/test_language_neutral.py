"""No language left hard-coded: the package (its Python and its page), scripts/ and tooling/ (Python and
shell) name no language code "en" / "fr" outside the corpus definitions and
a short, explicit allowlist of documented defaults, each entry with its reason.

What counts as naming one, in code only (comments and docstrings, which give examples, do not):
a string that is a code ("en"), a file suffix (``dict.en.txt``, ``f"{prefix}.fr"``), a pair
(``en-fr``, ``fr_en``, ``En->Fr``), a code given to an option (``-s en``, ``--target-lang=fr``)
or listed in braces (``{en,fr}``). Python is read through ``ast`` (string constants, f-string
parts included, docstrings left out), shell and the page line by line without their comments, where
a code is any bare word ``en`` / ``fr``."""

import ast
import re
from pathlib import Path

import pytest
from conftest import REPO

CODE = r"(?:en|fr)"
IN_STRINGS = [  # (what, pattern) for the text of a string
    ("a file suffix", re.compile(rf"\.{CODE}\b")),
    ("a pair", re.compile(rf"\b{CODE}\s*(?:-|_|->|→)\s*{CODE}\b", re.IGNORECASE)),
    ("a code given to an option", re.compile(rf"(?:^|\s)(?:-s|-t|--source-lang|--target-lang)[\s=]{CODE}\b")),
    ("codes in braces", re.compile(rf"\{{{CODE}(?:,\w+)+\}}")),
]
BARE_WORD = re.compile(rf"(?<![\w]){CODE}(?![\w])")
QUOTED = re.compile(rf"([\"'`]){CODE}\1")

CORPUS_DEFINITIONS = {  # whole files: where each named corpus's files are and which languages they hold
    "rnnsearch_plugin/data/corpora.py",
    "rnnsearch_plugin/data/sources.py",
    "rnnsearch_plugin/data/hansards.py",
    # the published results (docs/results): which named corpus each stage trains in which direction
    "tooling/reproduce_results.sh",
    "tooling/publish_results.py",
    "tooling/alignment_page.py",
    # the Hansards alignment gold's English-French sentences and the French contractions its tokenisation expands
    "tooling/statistical_alignments.py",
}
ALLOWED = {  # (file, a fragment of the line): why that line may name the languages
    ("rnnsearch_plugin/data/languages.py", "DEFAULT_PAIR = "): "the one named default pair (the paper's En->Fr)",
    ("rnnsearch_plugin/data/alignment_gold.py", "PAIR = "): "the Hansards' AER gold standard aligns English dev.e with French dev.f",
    ("rnnsearch_plugin/serve/static/index.html", '<html lang="en">'): "the page's own words are English",
    ("rnnsearch_plugin/serve/static/app.js", 'new Intl.DisplayNames(["en"]'): "language names in the page's own language",
    ("scripts/quickstart.sh", "SRC=${SRC:-en}"): "the quickstart's documented default source",
    ("scripts/quickstart.sh", "TGT=${TGT:-fr}"): "the quickstart's documented default target",
    (
        "scripts/quickstart.sh",
        'if [[ "$SRC-$TGT" == en-fr ]]; then WORK=${WORK:-work/quickstart}',
    ): "the quickstart's documented default WORK for the default pair",
    ("scripts/quickstart.sh", '[[ "$SRC" == en ]] || EXAMPLE='): "the quickstart's example sentence is English",
    (
        "scripts/quickstart.sh",
        'if [[ "$SRC-$TGT" != en-fr && "$SRC-$TGT" != fr-en ]]',
    ): "the Hansards' AER gold standard is En-Fr (rnnsearch-aer transposes it for Fr->En)",
}


def docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are docstrings (of the module, classes, functions)."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            found.add(id(body[0].value))
    return found


def string_offences(text: str) -> list[str]:
    """What in one string's text names a language (IN_STRINGS), or "a code" when it is one."""
    return ["a code"] * (text.strip() in ("en", "fr")) + [what for what, pattern in IN_STRINGS if pattern.search(text)]


def python_offences(source: str) -> list[tuple[int, str]]:
    """(line, what) of the string constants of the code (docstrings left out) that name a language,
    each once."""
    tree = ast.parse(source)
    skipped = docstrings(tree)
    return sorted(
        {
            (node.lineno, what)
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped
            for what in string_offences(node.value)
        }
    )


def without_comment(line: str, marker: str) -> str:
    """The line up to its comment (``marker`` at its start or after a space, outside quotes)."""
    quote = None
    for index, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "\"'":
            quote = char
        elif line.startswith(marker, index) and (index == 0 or line[index - 1].isspace()):
            return line[:index]
    return line


def line_offences(source: str, marker: str, pattern: re.Pattern) -> list[tuple[int, str]]:
    """(line, what) of each line of shell or of the page whose code names a language: ``pattern``
    (a bare word in shell, a quoted code in the page) or IN_STRINGS."""
    source = re.sub(r"<!--.*?-->", lambda comment: "\n" * comment[0].count("\n"), source, flags=re.S)
    found = []
    for number, line in enumerate(source.splitlines(), 1):
        code = without_comment(line, marker)
        named = ["a code"] * bool(pattern.search(code)) + [what for what, regex in IN_STRINGS if regex.search(code)]
        found += [(number, named[0])] if named else []
    return found


def offences(path: Path) -> list[tuple[int, str]]:
    source = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        return python_offences(source)
    if path.suffix == ".sh":
        return line_offences(source, "#", BARE_WORD)
    return line_offences(source, "//" if path.suffix == ".js" else "/*", QUOTED)


def scanned() -> list[Path]:
    package = [path for path in (REPO / "rnnsearch_plugin").rglob("*") if path.suffix == ".py" or path.parent.name == "static"]
    commands = [path for folder in ("scripts", "tooling") for suffix in ("py", "sh") for path in (REPO / folder).glob(f"*.{suffix}")]
    return sorted(path for path in [*package, *commands] if path.is_file() and "__pycache__" not in path.parts)


def test_the_matcher_finds_codes_in_code_and_not_in_prose():
    python = '''"""Docstring: raw/test.en, -s en -t fr, En->Fr."""
import x  # a comment: test.en
A = "en"
B = f"{prefix}.fr"
C = ["-s", source, "-t", target]
D = "Plusieurs filles en train de jouer"  # French prose, not a code
E = "multi30k ... -s en"
F = {"text": "the En->Fr model", "file": "{train,val}.{en,fr}.gz"}
G = "dict.{lang}.txt, English, French, encoder, frame"
def f(lang: str = "fr"):
    """Translates test.fr."""
'''
    assert python_offences(python) == [
        (3, "a code"),
        (4, "a file suffix"),
        (7, "a code given to an option"),
        (8, "a pair"),
        (8, "codes in braces"),
        (10, "a code"),
    ]
    shell = '# -s en in a comment\nSRC=${SRC:-en}\nfairseq-train -s "$SRC" -t "$TGT"  # not en\necho "$WORK/x.fr-en"\nenv entry\n'
    assert line_offences(shell, "#", BARE_WORD) == [(2, "a code"), (4, "a code")]
    page = '<!-- lang="fr" -->\n<html lang="en">\n<p class="entry">\n'
    assert line_offences(page, "/*", QUOTED) == [(2, "a code")]


def test_no_language_code_outside_the_corpus_definitions_and_the_allowlist():
    """Each offender as FILE:LINE: what, the line; and each allowlist entry must still match a line."""
    entries = ALLOWED
    used, offenders = set(), []
    for path in scanned():
        name = path.relative_to(REPO).as_posix()
        if name in CORPUS_DEFINITIONS:
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, what in offences(path):
            line = lines[number - 1].strip()
            matched = [entry for entry in entries if entry[0] == name and entry[1] in line]
            used.update(matched)
            if not matched:
                offenders.append(f"{name}:{number}: {what}: {line}")
    assert not offenders, "language codes outside the corpus definitions and the allowlist:\n" + "\n".join(offenders)
    stale = [f"{name}: {fragment!r}" for name, fragment in entries.keys() - used]
    assert not stale, "allowlist entries that match no line any more (remove them):\n" + "\n".join(stale)


@pytest.mark.parametrize("name", sorted(CORPUS_DEFINITIONS))
def test_the_corpus_definitions_exist(name):
    """A renamed corpus module would otherwise leave its replacement unchecked and this list stale."""
    assert (REPO / name).is_file()
