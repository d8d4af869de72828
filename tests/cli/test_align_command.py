"""rnnsearch-align: word links of a corpus in Pharaoh format, from one model or two
symmetrised, the soft alignments beside them, resumable output, and bad input refused in one line."""

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_one_line_error, run

from rnnsearch_plugin.analysis.alignment import merge_pieces
from rnnsearch_plugin.analysis.links import SYMMETRISATIONS
from rnnsearch_plugin.cli import align as align_command
from rnnsearch_plugin.cli.align import main as align_main
from rnnsearch_plugin.data.textio import read_lines


def pairs_in(folder: Path, sources: list[str], targets: list[str]) -> list[str]:
    """--source and --target files of these lines, written to ``folder`` (a lone surrogate such
    as "\\udcff" as the byte it escapes, which is not UTF-8)."""
    paths = [folder / "pairs.src", folder / "pairs.tgt"]
    for path, lines in zip(paths, (sources, targets)):
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8", errors="surrogateescape")
    return ["--source", str(paths[0]), "--target", str(paths[1])]


def first_pairs(multi30k: Path, count: int = 6) -> tuple[list[str], list[str]]:
    return read_lines(multi30k / "raw" / "test.en")[:count], read_lines(multi30k / "raw" / "test.fr")[:count]


def pharaoh(line: str) -> set[tuple[int, int]]:
    return {tuple(int(position) for position in link.split("-")) for link in line.split()}  # type: ignore[misc]


def soft_records(path: Path) -> list[dict]:
    return [json.loads(line) for line in read_lines(path)]


def test_links_are_the_argmax_of_each_sentences_attention_merged_into_its_words(multi30k, checkpoint, hub, tmp_path):
    sources, targets = first_pairs(multi30k)
    align_main(
        [
            "--path",
            str(checkpoint),
            "--data",
            str(multi30k / "bin"),
            *pairs_in(tmp_path, sources, targets),
            "--out",
            str(tmp_path / "links"),
            "--soft",
            str(tmp_path / "soft.jsonl"),
        ]
    )
    links, records = read_lines(tmp_path / "links"), soft_records(tmp_path / "soft.jsonl")
    assert len(links) == len(records) == len(sources)
    for line, source, target, record in zip(links, sources, targets, records):
        # the other route: the whole sentence encoded and force-decoded alone (the API's align), pieces merged to words
        alignment = hub.align(source, target)
        words, source_words, target_words = merge_pieces(alignment.weights, alignment.source_tokens, alignment.target_tokens, hub.scheme)
        assert (source_words[:-1], target_words[:-1]) == (source.split(), target.split())  # </s> last
        np.testing.assert_allclose(record["weights"], words[:-1, :-1], atol=1e-4)
        assert pharaoh(line) == {(int(source_word), target_word) for target_word, source_word in enumerate(words[:-1, :-1].argmax(axis=1))}
        assert (record["source"], record["target"]) == (source.split(), target.split())


def test_a_byte_order_mark_at_the_start_of_either_file_is_no_part_of_its_first_word(multi30k, checkpoint, tmp_path):
    """--source and --target that begin with a UTF-8 byte-order mark (Windows Notepad's) give the same
    links and soft alignments as without it."""
    sources, targets = first_pairs(multi30k, 2)
    written = {}
    for mark in ("", "\ufeff"):
        folder = tmp_path / ("marked" if mark else "plain")
        folder.mkdir()
        inputs = pairs_in(folder, [mark + sources[0], *sources[1:]], [mark + targets[0], *targets[1:]])
        outputs = ["--out", str(folder / "links"), "--soft", str(folder / "soft.jsonl")]
        align_main(["--path", str(checkpoint), "--data", str(multi30k / "bin"), *inputs, *outputs])
        written[mark] = [(folder / name).read_bytes() for name in ("links", "soft.jsonl")]
    assert written[""] == written["\ufeff"]


def test_both_directions_symmetrised_from_the_two_models_attention(multi30k, checkpoint, fr_en, tmp_path):
    sources, targets = first_pairs(multi30k)
    reverse_data, reverse_checkpoint = fr_en
    common = [
        "--path",
        str(checkpoint),
        "--data",
        str(multi30k / "bin"),
        *pairs_in(tmp_path, sources, targets),
        "--reverse-path",
        str(reverse_checkpoint),
        "--reverse-data",
        str(reverse_data / "bin"),
    ]
    found = {}
    for name in SYMMETRISATIONS:
        align_main([*common, "--symmetrise", name, "--out", str(tmp_path / name), "--soft", str(tmp_path / f"{name}.jsonl")])
        found[name] = [pharaoh(line) for line in read_lines(tmp_path / name)]
    for number, record in enumerate(soft_records(tmp_path / "union.jsonl")):
        weights, reverse_weights = np.array(record["weights"]), np.array(record["reverse_weights"])  # T x S, S x T
        assert reverse_weights.shape == weights.shape[::-1]
        forward = {(int(s), t) for t, s in enumerate(weights.argmax(axis=1))}  # each target word's source word
        backward = {(s, int(t)) for s, t in enumerate(reverse_weights.argmax(axis=1))}  # each source word's target word
        assert found["intersect"][number] == forward & backward
        assert found["union"][number] == forward | backward
        assert forward & backward <= found["grow-diag-final-and"][number] <= forward | backward
    align_main([*common, "--out", str(tmp_path / "default")])  # the default symmetrisation
    assert read_lines(tmp_path / "default") == read_lines(tmp_path / "grow-diag-final-and")


def test_an_interrupted_run_resumes_after_the_last_pair_it_wrote(multi30k, checkpoint, tmp_path, monkeypatch, caplog):
    sources, targets = first_pairs(multi30k)
    command = [
        "--path",
        str(checkpoint),
        "--data",
        str(multi30k / "bin"),
        *pairs_in(tmp_path, sources, targets),
        "--soft",
        str(tmp_path / "soft"),
    ]
    align_main([*command, "--out", str(tmp_path / "whole")])
    pharaoh_line, calls = align_command.pharaoh_line, []

    def interrupted_at_the_fourth_pair(links):
        calls.append(links)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return pharaoh_line(links)

    monkeypatch.setattr(align_command, "pharaoh_line", interrupted_at_the_fourth_pair)
    out = tmp_path / "links"
    with pytest.raises(SystemExit, match="interrupted; .*links.part holds the pairs done: run the same command again"):
        align_main([*command, "--out", str(out)])
    assert not out.exists() and len(read_lines(tmp_path / "links.part")) == 3
    with open(tmp_path / "links.part", "a") as part:
        part.write("0-1 2-")  # a line cut off as the process died
    monkeypatch.setattr(align_command, "pharaoh_line", pharaoh_line)
    with caplog.at_level("INFO", logger="rnnsearch_plugin.align"):
        align_main([*command, "--out", str(out)])
    assert "resuming after line 3 of 6" in caplog.text
    assert out.read_text() == (tmp_path / "whole").read_text() and not (tmp_path / "links.part").exists()
    assert (tmp_path / "soft").read_text().count("\n") == 6 and not list(tmp_path.glob("*.json"))


@pytest.mark.parametrize("change", ["target cut short", "source not utf-8"])
def test_an_input_that_fails_while_it_is_read_keeps_the_pairs_before_in_the_part_file(change, multi30k, checkpoint, tmp_path, monkeypatch):
    """An input file that changes after the command checked it (here while the model loads): the
    pairs aligned before the failure are written to the .part file, as the whole run writes them,
    which keeps its name, and the command stops in one line saying so; no --out appears."""
    sources, targets = first_pairs(multi30k, 400)
    command = ["--path", str(checkpoint), "--data", str(multi30k / "bin"), *pairs_in(tmp_path, sources, targets)]
    align_main([*command, "--out", str(tmp_path / "whole")])
    source, target = tmp_path / "pairs.src", tmp_path / "pairs.tgt"
    changed, lines, error, kept = {  # the file changed, its lines now, the error, the pairs aligned before it
        "target cut short": (target, targets[:250], f"{target} changed during the run: it now ends after 250 lines, where it had 400", 250),
        "source not utf-8": (source, [*sources[:300], "caf\udce9", *sources[301:]], f"{source} is not valid UTF-8 on line 301", 300),
    }[change]
    loaded = align_command.load

    def load_then_change(*args):
        model = loaded(*args)
        changed.write_text("".join(line + "\n" for line in lines), encoding="utf-8", errors="surrogateescape")
        return model

    monkeypatch.setattr(align_command, "load", load_then_change)
    out = tmp_path / "links"
    with pytest.raises(SystemExit) as stopped:
        align_main([*command, "--out", str(out)])
    message = str(stopped.value.code)
    assert message.startswith(f"rnnsearch-align: error: {error}") and "\n" not in message
    assert message.endswith(f"({out}.part keeps the {kept:,} pairs aligned before it; it is not the whole output)")
    assert not out.exists() and read_lines(tmp_path / "links.part") == read_lines(tmp_path / "whole")[:kept]


def test_a_pair_longer_than_the_model_accepts_is_reported_by_line_and_gets_no_links(multi30k, checkpoint, tmp_path, capsys):
    sources, targets = first_pairs(multi30k, 3)
    sources[1] = " ".join(["chien"] * 1100)  # over --max-source-positions 1024
    align_main(
        [
            "--path",
            str(checkpoint),
            "--data",
            str(multi30k / "bin"),
            *pairs_in(tmp_path, sources, targets),
            "--out",
            str(tmp_path / "links"),
        ]
    )
    links = read_lines(tmp_path / "links")
    assert len(links) == 3 and links[1] == "" and links[0] and links[2]
    assert "1 pairs over a model's length limit have no links (lines 2)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "case",
    [
        "line counts",
        "empty line",
        "invisible line",
        "invalid utf-8",
        "source folder",
        "out folder",
        "out under a file",
        "rnnencdec",
        "reverse pair",
    ],
)
def test_bad_input_is_refused_in_one_line_and_nothing_is_written(case, multi30k, checkpoint, rnnencdec_checkpoint, tmp_path):
    """Each refused before any work: an --out that is a folder would fail only when the finished
    output is renamed to it."""
    sources, targets = first_pairs(multi30k, 3)
    model, expected, out = ["--path", str(checkpoint), "--data", str(multi30k / "bin")], "", tmp_path / "links"
    if case == "line counts":
        targets, expected = targets[:2], "pairs.src has 3 lines and"
    elif case == "empty line":
        sources[1], expected = " ", "pairs.src:2 is blank (no visible character): every pair needs words on both sides"
    elif case == "invisible line":  # a zero-width space, a direction override and an accent with no letter
        targets[2], expected = "\u200b \u202e \u0301", "pairs.tgt:3 is blank (no visible character): every pair needs words"
    elif case == "invalid utf-8":  # the bad byte on line 2, after a first line longer than a decoding buffer (8 KiB)
        sources[0], sources[1] = " ".join([sources[0]] * 200), "caf\udce9 " + sources[1]
        expected = f"pairs.src is not valid UTF-8 on line 2 (invalid continuation byte at byte {len(sources[0].encode()) + 1 + 3})"
    elif case == "source folder":
        (tmp_path / "sources").mkdir()
        expected = f"{tmp_path / 'sources'} is a folder, not a file: give a file in its place"
    elif case == "out folder":
        out.mkdir()
        expected = f"--out {out} is a folder: give the name of the file to write"
    elif case == "out under a file":
        out.write_text("a file\n")
        out = out / "links"
        expected = f"--out {out} cannot be written ({tmp_path / 'links'} is not a folder this user may write in)"
    elif case == "rnnencdec":
        model[1], expected = str(rnnencdec_checkpoint), "has no attention and no alignment head to align with (an rnnencdec model?)"
    else:  # the model itself given as its own reverse: en->fr, not fr->en
        model += ["--reverse-path", str(checkpoint), "--reverse-data", str(multi30k / "bin")]
        expected = "translates en->fr, not the reverse of --path's en->fr: give a model of fr->en"
    inputs = pairs_in(tmp_path, sources, targets)
    if case == "source folder":
        inputs[1] = str(tmp_path / "sources")
    before = sorted(tmp_path.rglob("*"))
    result = run("rnnsearch-align", *model, *inputs, "--out", str(out), check=False)
    assert_one_line_error(result, "rnnsearch-align: error:", expected)
    assert result.returncode == 1 and sorted(tmp_path.rglob("*")) == before
