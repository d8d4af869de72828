"""rnnsearch-serve: the JSON API against the Python API it serves, its errors, its
queue, and the page in headless Chromium (scripts/install_browser.sh)."""

import http.client
import json
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator
from urllib.parse import urlencode, urlsplit

import numpy as np
import pytest
import torch
from conftest import REPO, run

from rnnsearch_plugin import load
from rnnsearch_plugin.analysis.alignment import merge_pieces
from rnnsearch_plugin.serve.batcher import Batcher, QueueFull
from rnnsearch_plugin.serve.cli import build_parser
from rnnsearch_plugin.serve.hosts import AllowedHosts
from rnnsearch_plugin.serve.requests import Limits, RequestError, parse_body
from rnnsearch_plugin.serve.translator import ScoreItem, TranslateItem, run_batch

sys.path.insert(0, str(REPO / "tooling"))
from serve_load import call, serving  # noqa: E402

LIMITS = ["--max-sentences", "4", "--max-sentence-tokens", "40", "--max-beam", "6", "--max-request-bytes", "20000"]
TOLERANCE = 1e-4  # scores: the same sentence in batches of other sizes differs by float rounding
WEIGHTS = 2e-6  # alignment weights: the server rounds them to 6 decimals
READ_TIMEOUT, MAX_CONNECTIONS = 2, 4  # the impatient server's
LATE = 3  # seconds past a deadline that a busy machine may take to act on it


@pytest.fixture(scope="module")
def sentences(multi30k) -> list[str]:
    """Eight test sentences well within the server's --max-sentence-tokens 40."""
    return [line for line in (multi30k / "raw" / "test.en").read_text(encoding="utf-8").splitlines() if len(line.split()) <= 12][:8]


@contextmanager
def logging_server(checkpoint: Path, data: Path, folder: Path, *options: str) -> Iterator[tuple[str, subprocess.Popen, Path]]:
    """rnnsearch-serve started from ``folder``, so that it runs the installed package, once uvicorn
    has logged its start (a test then reads what its requests log): its address, process and log."""
    with serving(checkpoint, data, *options, log=folder / "serve.log", cwd=folder) as (address, process):
        assert call(address, "health")[0] == 200
        yield address, process, folder / "serve.log"


@pytest.fixture(scope="module")
def served(checkpoint, multi30k, tmp_path_factory):
    """The server of most tests: its address and its log."""
    folder = tmp_path_factory.mktemp("serve")
    with logging_server(checkpoint, multi30k / "bin", folder, *LIMITS) as (address, process, log):
        yield address, log
    assert process.returncode == 0, f"rnnsearch-serve did not stop cleanly on SIGINT:\n{log.read_text()[-2000:]}"


@pytest.fixture(scope="module")
def server(served) -> str:
    return served[0]


@pytest.fixture(scope="module")
def impatient(checkpoint, multi30k, tmp_path_factory):
    """A server that waits READ_TIMEOUT seconds for a request and holds MAX_CONNECTIONS connections: its address and log."""
    options = ("--read-timeout", str(READ_TIMEOUT), "--max-connections", str(MAX_CONNECTIONS))
    with logging_server(checkpoint, multi30k / "bin", tmp_path_factory.mktemp("impatient_serve"), *options) as (address, _, log):
        yield address, log


@pytest.fixture(scope="module")
def rnnencdec_server(rnnencdec_checkpoint, multi30k, tmp_path_factory):
    """The session's RNNencdec checkpoint (only its lack of attention matters) being served, with
    the absolute paths in /health."""
    folder = tmp_path_factory.mktemp("rnnencdec_serve")
    with serving(rnnencdec_checkpoint, multi30k / "bin", "--health-paths", log=folder / "serve.log", cwd=folder) as (address, _):
        yield address


@pytest.fixture(scope="module")
def head_served(headed, multi30k, tmp_path_factory):
    """The session's checkpoint with an alignment head being served: its address, and the hub on it."""
    folder = tmp_path_factory.mktemp("head_serve")
    with serving(headed[0], multi30k / "bin", log=folder / "serve.log", cwd=folder) as (address, _):
        yield address, load(headed[0], multi30k / "bin")


def best(hub, sentence: str, beam: int, nbest: int = 1) -> list[dict]:
    """The hub's own n-best list of one sentence: translations and scores."""
    hypos = hub.generate([hub.encode(sentence)], beam=beam)[0][:nbest]
    return [{"translation": hub.decode(hypo["tokens"]), "score": float(hypo["score"])} for hypo in hypos]


def words(hub, sentence: str, beam: int, attention: bool = False) -> tuple[np.ndarray, list[str], list[str]]:
    """The hub's alignment of a sentence's best translation, merged into words (the attention's with ``attention``)."""
    found = hub.align(sentence, beam=beam, attention=attention)
    return merge_pieces(found.weights, found.source_tokens, found.target_tokens, hub.scheme)


def same_hypotheses(served: list[dict], expected: list[dict]) -> bool:
    return [h["translation"] for h in served] == [h["translation"] for h in expected] and all(
        abs(h["score"] - e["score"]) < TOLERANCE for h, e in zip(served, expected)
    )


def logged(log: Path, offset: int, count: int) -> list[str]:
    """The lines the server logged after ``offset`` characters once there are ``count`` (or 10 s
    have passed), with any that the same event writes a moment later (a traceback's)."""
    deadline = time.monotonic() + 10
    while len(log.read_text()[offset:].splitlines()) < count and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.3)
    return log.read_text()[offset:].splitlines()


def connect(server: str, data: bytes = b"") -> socket.socket:
    """A connection to the server that sends ``data`` (nothing, part of a request) and waits for at most a deadline and LATE."""
    address = urlsplit(server)
    connection = socket.create_connection((address.hostname, address.port), timeout=READ_TIMEOUT + 2 * LATE)
    connection.sendall(data)
    return connection


def head(length: int) -> bytes:
    """A POST /translate's headers, announcing a body of ``length`` bytes."""
    return b"POST /translate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % length


def until_closed(connection: socket.socket) -> bytes:
    """What the server sends until it closes the connection (socket.timeout if it does not)."""
    received = b""
    while chunk := connection.recv(65536):
        received += chunk
    connection.close()
    return received


def answer_of(response: bytes) -> tuple[int, dict]:
    """(status, decoded JSON) of one raw HTTP answer."""
    status_line, _, body = response.partition(b"\r\n\r\n")
    return int(status_line.split()[1]), json.loads(body)


def ask(server: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None) -> tuple[int, dict]:
    """(HTTP status, decoded JSON) of GET ``path`` or a POST of ``body``, with ``headers`` (a Host of their own included)."""
    address = urlsplit(server)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=300)
    connection.request("GET" if body is None else "POST", "/" + path, body=body, headers=headers or {})
    response = connection.getresponse()
    return response.status, json.loads(response.read())


def test_health_names_the_model_and_the_page_is_local(server, checkpoint, multi30k):
    """/health names the files, not where they are on the server (only --health-paths says that)."""
    assert server.startswith("http://127.0.0.1:")
    status, health = call(server, "health")
    assert status == 200 and health["checkpoint"] == checkpoint.name
    assert (health["architecture"], health["attention"], health["subwords"]) == ("rnnsearch_small", True, "spm")
    for side, language in (("source", "en"), ("target", "fr")):
        dictionary = multi30k / "bin" / f"dict.{language}.txt"
        assert health[side] == {
            "language": language,
            "dictionary": dictionary.name,
            "size": len(dictionary.read_text().splitlines()) + 4,
        }  # + <s> <pad> </s> <unk>
    assert health["limits"]["max_sentences"] == 4 and health["limits"]["max_beam"] == 6
    import urllib.request

    page = urllib.request.urlopen(server).read().decode()
    assert re.search(r'<textarea id="sentence"[^>]* dir="auto"', page)  # right-to-left sources in reading order
    assets = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert sorted(assets) == ["static/app.css", "static/app.js"]
    for asset in assets:  # served from the installed package, as the repository has them
        assert urllib.request.urlopen(server + asset).read() == (REPO / "rnnsearch_plugin/serve" / asset).read_bytes()


def test_translations_and_alignments_match_the_python_api(server, hub, sentences):
    status, answer = call(server, "translate", {"sentences": sentences[:3], "beam": 4, "nbest": 2})
    assert status == 200 and len(answer["translations"]) == 3
    for sentence, translation in zip(sentences, answer["translations"]):
        assert translation["source"] == sentence
        assert same_hypotheses(translation["hypotheses"], best(hub, sentence, 4, 2))
        weights, source, target = words(hub, sentence, 4)
        alignment = translation["hypotheses"][0]["alignment"]
        assert (alignment["source"], alignment["target"]) == (source, target)
        assert np.abs(np.array(alignment["weights"]) - weights).max() < WEIGHTS
        for hypothesis in translation["hypotheses"]:  # every row a distribution over the source words
            assert np.allclose(np.array(hypothesis["alignment"]["weights"]).sum(axis=1), 1, atol=1e-4)
    status, answer = call(server, "translate", {"sentences": sentences[:1], "beam": 4, "pieces": True})
    found = hub.align(sentences[0], beam=4)
    alignment = answer["translations"][0]["hypotheses"][0]["alignment"]
    assert (alignment["source"], alignment["target"]) == (found.source_tokens, found.target_tokens)
    assert np.abs(np.array(alignment["weights"]) - found.weights).max() < WEIGHTS


def test_scores_match_the_python_api(server, hub, sentences, multi30k):
    references = (multi30k / "raw" / "test.fr").read_text(encoding="utf-8").splitlines()[:3]
    status, answer = call(server, "score", {"pairs": [{"source": s, "target": t} for s, t in zip(sentences, references)]})
    assert status == 200
    for scored, expected, reference in zip(answer["scores"], hub.score(sentences[:3], references), references):
        assert scored["target"] == reference and abs(scored["score"] - expected["score"]) < TOLERANCE
        assert abs(sum(scored["positional_scores"]) - scored["score"]) < TOLERANCE
        assert np.array(scored["alignment"]["weights"]).shape == (len(scored["alignment"]["target"]), len(scored["alignment"]["source"]))


def test_concurrent_requests_each_get_their_own_translations(server, hub, sentences):
    requests = [{"sentences": sentences[i : i + 2], "beam": 2 + i % 3, "alignment": False} for i in range(8)]
    expected = [[best(hub, s, r["beam"]) for s in r["sentences"]] for r in requests]
    _, before = call(server, "health")
    answers: list = [None] * len(requests)

    def send(index: int) -> None:
        answers[index] = call(server, "translate", requests[index])

    threads = [threading.Thread(target=send, args=(index,)) for index in range(len(requests))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for (status, answer), request, wanted in zip(answers, requests, expected):
        assert status == 200
        assert [t["source"] for t in answer["translations"]] == request["sentences"]
        assert all(same_hypotheses(t["hypotheses"], w) for t, w in zip(answer["translations"], wanted))
        assert all("alignment" not in h for t in answer["translations"] for h in t["hypotheses"])
    _, after = call(server, "health")
    assert after["queue"]["requests"] - before["queue"]["requests"] == 8
    assert after["queue"]["sentences"] - before["queue"]["sentences"] == sum(len(r["sentences"]) for r in requests)


BAD_REQUESTS = [  # (path, body, status, a phrase of the message)
    ("translate", b"", 400, "empty request body"),
    ("translate", b'{"sentences": ["A dog."]', 400, "invalid JSON"),
    ("translate", '{"sentences": ["Un caf\u00e9."]}'.encode("latin-1"), 400, "not UTF-8"),
    ("translate", b'["A dog."]', 400, "expected a JSON object"),
    ("translate", {"sentences": "A dog."}, 400, "non-empty list"),
    ("translate", {"sentences": ["A dog.", 7]}, 400, "sentence 1 must be a string"),
    ("translate", {"sentence": ["A dog."]}, 400, "unknown field 'sentence'"),
    ("translate", {"sentences": ["A dog."] * 5}, 413, "more than the limit of 4"),
    ("translate", {"sentences": ["A dog " * 30]}, 413, "more than the limit of 40"),
    ("translate", b'{"sentences": ["' + b"a" * 20000 + b'"]}', 413, "over 20,000 bytes"),
    ("translate", {"sentences": ["A dog."], "beam": 0}, 422, "'beam' is 0"),
    ("translate", {"sentences": ["A dog."], "beam": 7}, 422, "between 1 and 6"),
    ("translate", {"sentences": ["A dog."], "beam": 3, "nbest": 4}, 422, "'nbest' is 4"),
    ("translate", {"sentences": ["A dog."], "beam": "5"}, 400, "must be an integer"),
    ("translate", b'{"sentences": ["A dog."], "beam": 1' + b"0" * 5000 + b"}", 400, "an integer of more than 4,300 digits"),
    ("translate", {"sentences": ["A dog."], "alignment": "yes"}, 400, "true or false"),
    ("score", {"pairs": [{"source": "A dog."}]}, 400, "pair 0 must be an object"),
    ("score", {"pairs": [{"source": "A dog.", "target": "Un chien " * 30}]}, 413, "pair 0's target has"),
    ("health", b"{}", 405, "Method Not Allowed"),
    ("nowhere", None, 404, "Not Found"),
]


@pytest.mark.parametrize("path, body, status, phrase", BAD_REQUESTS, ids=[f"{p}-{s}-{m}" for p, _, s, m in BAD_REQUESTS])
def test_bad_requests_get_a_json_error_and_the_server_goes_on(server, path, body, status, phrase):
    got, answer = call(server, path, body)
    assert (got, list(answer)) == (status, ["error"]) and phrase in answer["error"] and "\n" not in answer["error"]
    assert call(server, "translate", {"sentences": ["A dog."], "beam": 1})[0] == 200


def test_empty_sentences_get_the_empty_translation(server, hub, sentences):
    """Empty, whitespace, and no visible character (a direction override, an accent alone) alike."""
    request = {"sentences": ["", sentences[0], " \t ", "\u202e\u0301"], "beam": 4, "nbest": 2}
    status, answer = call(server, "translate", request)
    blanks = [answer["translations"][index] for index in (0, 2, 3)]
    empty = {"translation": "", "score": 0.0, "tokens": [], "alignment": {"source": [], "target": [], "weights": [], "by": "attention"}}
    assert status == 200 and [t["hypotheses"] for t in blanks] == [[empty]] * 3
    assert [t["source_tokens"] for t in blanks] == [[]] * 3
    assert same_hypotheses(answer["translations"][1]["hypotheses"], best(hub, sentences[0], 4, 2))


def test_deeply_nested_json_is_a_bad_request_logged_in_one_line(served):
    """Where Python's parser raised RecursionError (500, and a traceback in the log): 400, one line,
    and only the access line in the log; 100,000 levels parsed as the server parses a body under
    --max-request-bytes, 9,000 (18,000 bytes, under the test server's limit) sent to the server."""
    with pytest.raises(RequestError, match="nested more than") as refused:
        parse_body(b"[" * 100_000 + b"]" * 100_000)
    assert refused.value.status == 400
    server, log = served
    before = len(log.read_text())
    got, answer = call(server, "translate", b"[" * 9_000 + b"]" * 9_000)
    assert (got, list(answer)) == (400, ["error"]) and "nested more than" in answer["error"] and "\n" not in answer["error"]
    lines = logged(log, before, 1)  # the access line is written after the answer
    assert len(lines) == 1 and "POST /translate" in lines[0] and "400" in lines[0], lines


def test_rnnencdec_translates_but_has_no_alignment(rnnencdec_server, rnnencdec_checkpoint, multi30k):
    _, health = call(rnnencdec_server, "health")
    assert (health["architecture"], health["attention"]) == ("rnnencdec_small", False)
    assert health["checkpoint"] == str(rnnencdec_checkpoint.resolve())  # --health-paths
    assert health["target"]["dictionary"] == str((multi30k / "bin" / "dict.fr.txt").resolve())
    status, answer = call(rnnencdec_server, "translate", {"sentences": ["A dog."]})
    assert status == 200 and "alignment" not in answer["translations"][0]["hypotheses"][0]
    pair = {"pairs": [{"source": "A dog.", "target": "Un chien."}]}
    assert call(rnnencdec_server, "score", pair)[0] == 200
    for path, body in (("translate", {"sentences": ["A dog."], "alignment": True}), ("score", {**pair, "alignment": True})):
        status, answer = call(rnnencdec_server, path, body)
        assert status == 422 and "RNNencdec" in answer["error"]


def test_a_model_with_an_alignment_head_gives_the_heads_alignment_and_the_attention_beside_it(head_served, sentences, multi30k):
    """The alignment's "weights" are the head's a_ij (the API's ``align``), "attention" the attention's alpha
    (``align(..., attention=True)``), "by" says which "weights" are; in /translate and /score alike."""
    server, hub = head_served
    assert call(server, "health")[1]["aligned_by"] == "head"
    _, answer = call(server, "translate", {"sentences": sentences[:2], "beam": 4})
    for sentence, translation in zip(sentences, answer["translations"]):
        alignment = translation["hypotheses"][0]["alignment"]
        head, source, target = words(hub, sentence, 4)
        attention, _, _ = words(hub, sentence, 4, attention=True)
        assert (alignment["by"], alignment["source"], alignment["target"]) == ("head", source, target)
        assert np.abs(np.array(alignment["weights"]) - head).max() < WEIGHTS
        assert np.abs(np.array(alignment["attention"]) - attention).max() < WEIGHTS
        assert not np.allclose(head, attention, atol=1e-3)
    reference = (multi30k / "raw" / "test.fr").read_text(encoding="utf-8").splitlines()[0]
    _, answer = call(server, "score", {"pairs": [{"source": sentences[0], "target": reference}], "pieces": True})
    alignment = answer["scores"][0]["alignment"]
    assert alignment["by"] == "head"
    for key, attention in (("weights", False), ("attention", True)):
        expected = hub.align(sentences[0], reference, attention=attention).weights
        assert np.abs(np.array(alignment[key]) - expected).max() < WEIGHTS
    _, plain = call(server, "translate", {"sentences": [sentences[0]], "alignment": False})
    assert "alignment" not in plain["translations"][0]["hypotheses"][0]


def test_a_head_models_alignments_come_from_one_forced_pass_a_batch(head_served, sentences, multi30k):
    """A batch of /translate or /score requests with alignments runs the decoder's full forward once:
    the head's a_ij and the attention's alpha beside them come out of the same pass."""
    _, hub = head_served
    passes = []
    hook = hub.models[0].decoder.register_forward_pre_hook(
        lambda module, args, kwargs: passes.append(kwargs.get("incremental_state") is None), with_kwargs=True
    )
    references = (multi30k / "raw" / "test.fr").read_text(encoding="utf-8").splitlines()
    try:
        translated = run_batch(hub, ("translate", 3, 2), [TranslateItem(s, hub.encode(s), True, False) for s in sentences[:3]])
        full_passes = passes.count(True)
        scoring = [ScoreItem(s, t, hub.encode(s), hub.encode_target(t), True, False) for s, t in zip(sentences[:3], references)]
        scored = run_batch(hub, ("score",), scoring)
    finally:
        hook.remove()
    assert (full_passes, passes.count(True)) == (1, 2)
    alignments = [h["alignment"] for t in translated for h in t["hypotheses"]] + [s["alignment"] for s in scored]
    assert len(alignments) == 9 and all(a["by"] == "head" and "attention" in a for a in alignments)


def items(hub, sentences: list[str]) -> list[TranslateItem]:
    return [TranslateItem(s, hub.encode(s), alignment=False, pieces=False) for s in sentences]


def test_batcher_runs_waiting_requests_together_and_each_gets_its_own(hub, sentences):
    batcher = Batcher(lambda key, batch: run_batch(hub, key, batch), batch_items=4, max_waiting=4)
    jobs = [
        (("translate", 2, 1), sentences[0:2]),
        (("translate", 3, 1), sentences[2:3]),
        (("translate", 2, 1), sentences[3:5]),
        (("translate", 2, 1), sentences[5:7]),
    ]
    futures = [batcher.submit(key, items(hub, batch)) for key, batch in jobs]  # all wait: no worker yet
    with pytest.raises(QueueFull):
        batcher.submit(("translate", 2, 1), items(hub, sentences[:1]))
    batcher.start()
    results = [future.result(timeout=300) for future in futures]
    batcher.stop()
    # beam 2: jobs 0 and 2 fill one batch of 4 sentences, job 3 would overfill it; beam 3 runs alone
    assert batcher.stats() == {"requests": 4, "batches": 3, "sentences": 7, "failed": 0, "waiting": 0}
    for (key, batch), result in zip(jobs, results):
        assert [r["source"] for r in result] == batch
        assert all(same_hypotheses(r["hypotheses"], best(hub, s, key[1])) for r, s in zip(result, batch))


def test_batcher_fails_only_the_request_that_fails_and_drops_cancelled_ones(hub, sentences):
    batcher = Batcher(lambda key, batch: run_batch(hub, key, batch), batch_items=8, max_waiting=8)
    broken = TranslateItem("?", torch.tensor([len(hub.src_dict) + 100, hub.src_dict.eos()]), False, False)
    good, bad = batcher.submit(("translate", 2, 1), items(hub, sentences[:2])), batcher.submit(("translate", 2, 1), [broken])
    assert batcher.submit(("translate", 2, 1), items(hub, sentences[2:3])).cancel()  # its client gave up waiting
    batcher.start()
    assert same_hypotheses(good.result(timeout=300)[1]["hypotheses"], best(hub, sentences[1], 2))
    with pytest.raises(IndexError):
        bad.result(timeout=300)
    batcher.stop()
    assert batcher.stats() == {"requests": 1, "batches": 1, "sentences": 2, "failed": 1, "waiting": 0}


def test_command_line_mistakes_end_in_one_line(checkpoint, multi30k, tmp_path):
    missing = run("rnnsearch-serve", "--path", str(tmp_path / "none.pt"), "--data", str(multi30k / "bin"), "--port", "0", check=False)
    assert (missing.returncode, missing.stderr.strip()) == (1, f"rnnsearch-serve: error: --path {tmp_path / 'none.pt'}: no such file")
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        busy = run("rnnsearch-serve", "--path", str(checkpoint), "--data", str(multi30k / "bin"), "--port", str(port), check=False)
    assert busy.returncode == 1 and f"cannot listen on 127.0.0.1:{port}" in busy.stderr.strip().splitlines()[-1]
    too_long = run(
        "rnnsearch-serve",
        "--path",
        str(checkpoint),
        "--data",
        str(multi30k / "bin"),
        "--port",
        "0",
        "--max-sentence-tokens",
        "5000",
        check=False,
    )
    assert too_long.returncode == 1 and "more than the model accepts (1024" in too_long.stderr.strip().splitlines()[-1]
    no_port = run("rnnsearch-serve", "--path", str(checkpoint), "--data", str(multi30k / "bin"), "--port", "70000", check=False)
    assert no_port.returncode == 2 and "Traceback" not in no_port.stderr
    assert no_port.stderr.strip().splitlines()[-1] == (
        "rnnsearch-serve: error: argument --port: 70000 is not a port: give 1 to 65535, or 0 for a free one"
    )


CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.skip(
            "headless Chromium is not installed (Debian's chromium and chromium-driver): `sudo bash scripts/install_browser.sh` installs it"
        )
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed: pip install '.[test]'")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1200,900"):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=CHROMEDRIVER))
    yield driver
    driver.quit()


CELLS = """return Array.from(document.querySelectorAll('#heatmap rect.cell'), cell => ({row: Number(cell.dataset.row),
    col: Number(cell.dataset.col), weight: Number(cell.dataset.weight), fill: cell.getAttribute('fill')}))"""


LANGUAGES = """return Object.fromEntries(['translation', 'source-label', 'target-label'].map(name => [name,
    [...new Set(Array.from(document.querySelectorAll('.' + name), node => (node.getAttribute('dir') || 'ltr') + ' ' +
    node.getAttribute('lang')))]]))"""  # each kind of text in the model's languages: its direction and language


def labels(browser, side: str) -> list[str]:
    return browser.execute_script(f"return Array.from(document.querySelectorAll('#heatmap .{side}-label'), l => l.textContent)")


def test_page_translates_as_you_type_and_draws_the_alignment(server, browser, hub, sentences):
    from selenium.webdriver import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 120)
    browser.get(server)
    wait.until(lambda driver: "rnnsearch_small" in driver.find_element(By.ID, "model").text)
    assert browser.find_element(By.ID, "model").text.startswith("rnnsearch_small, English \u2192 French (en \u2192 fr; ")
    box = browser.find_element(By.ID, "sentence")
    assert (box.get_attribute("lang"), box.get_attribute("dir")) == ("en", "auto")
    assert box.get_attribute("placeholder") == "Type a sentence in English"
    box.send_keys("\u05e9\u05dc\u05d5\u05dd")  # Hebrew: the box turns right to left as it is typed
    assert browser.execute_script("return document.getElementById('sentence').matches(':dir(rtl)')") is True
    box.clear()
    browser.execute_script("window.notReloaded = true")
    nbest = browser.find_element(By.ID, "nbest")
    nbest.clear()
    nbest.send_keys("2")

    def shown() -> list[str]:
        return [item.text for item in browser.find_elements(By.CSS_SELECTOR, "#hypotheses .translation")]

    for typed, sentence in ((sentences[0], sentences[0]), (" " + sentences[1], f"{sentences[0]} {sentences[1]}")):
        box.send_keys(typed)  # key by key, as a person types
        expected = best(hub, sentence, 5, 2)
        wait.until(lambda driver, expected=expected: shown() == [h["translation"] for h in expected])
        weights, source, target = words(hub, sentence, 5)
        assert labels(browser, "source") == source and labels(browser, "target") == target
        assert browser.execute_script(LANGUAGES) == {"translation": ["auto fr"], "source-label": ["ltr en"], "target-label": ["ltr fr"]}
        cells = browser.execute_script(CELLS)  # one round trip for every cell's attributes
        assert sorted((cell["row"], cell["col"]) for cell in cells) == [  # one row a target word, one column a source word
            (row, column) for row in range(len(target)) for column in range(len(source))
        ]
        for cell in cells:  # 0 black, 1 white
            gray = round(255 * cell["weight"])
            assert abs(cell["weight"] - weights[cell["row"], cell["col"]]) < WEIGHTS
            assert cell["fill"] == f"rgb({gray}, {gray}, {gray})"
    cell = browser.find_elements(By.CSS_SELECTOR, "#heatmap rect.cell")[len(source) + 1]  # 2nd target word, 2nd source word
    ActionChains(browser).move_to_element(cell).perform()
    readout = browser.find_element(By.ID, "readout").text
    assert f"{weights[1, 1]:.3f}" in readout and f"\u201c\u2068{target[1]}\u2069\u201d" in readout
    browser.find_elements(By.CSS_SELECTOR, "#hypotheses li")[1].click()  # the second hypothesis's alignment
    _, answer = call(server, "translate", {"sentences": [f"{sentences[0]} {sentences[1]}"], "beam": 5, "nbest": 2})
    second = answer["translations"][0]["hypotheses"][1]["alignment"]
    assert labels(browser, "target") == second["target"]
    assert browser.execute_script("return window.notReloaded") is True
    loaded = browser.execute_script("return performance.getEntriesByType('resource').map(entry => entry.name)")
    assert loaded and all(name.startswith(server) for name in loaded)  # nothing from elsewhere


LINKS = "return Array.from(document.querySelectorAll('#heatmap rect.link'), link => [Number(link.dataset.row), Number(link.dataset.col)])"


def test_page_draws_the_heads_links_on_the_attentions_heatmap(head_served, browser, sentences):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    server, _ = head_served
    browser.get(f"{server}?{urlencode({'q': sentences[0], 'beam': 4})}")
    WebDriverWait(browser, 120).until(lambda driver: driver.find_elements(By.CSS_SELECTOR, "#heatmap rect.link"))
    _, answer = call(server, "translate", {"sentences": [sentences[0]], "beam": 4})
    alignment = answer["translations"][0]["hypotheses"][0]["alignment"]
    assert browser.find_element(By.ID, "model").text.endswith("subword types), with an alignment head")
    cells = browser.execute_script(CELLS)
    assert len(cells) == len(alignment["target"]) * len(alignment["source"])
    for cell in cells:  # the heatmap is the attention's (the page's request and this one are two passes: within the JSON's rounding)
        assert cell["weight"] == pytest.approx(alignment["attention"][cell["row"]][cell["col"]], abs=1.5e-6)
    links = [[row, int(column)] for row, column in enumerate(np.argmax(alignment["weights"], axis=1))]
    assert sorted(browser.execute_script(LINKS)) == links  # one outlined cell per target word: the head's largest a_ij
    legend = browser.find_element(By.ID, "legend").text
    assert legend.startswith("Gray: the attention’s α.") and "the alignment head’s links" in legend


def test_the_limits_table_of_docs_serve_md_is_rnnsearch_serves_options():
    """docs/serve.md's table of limits names every field of ``Limits`` as its option, with its
    default, and the page names every option of rnnsearch-serve."""
    page = (REPO / "docs" / "serve.md").read_text()
    rows = re.findall(r"^\| `--([a-z-]+)` \| ([\d,]+) \|", page, re.MULTILINE)
    documented = {option.replace("-", "_"): int(default.replace(",", "")) for option, default in rows}
    assert documented == Limits().as_dict()
    options = {option for action in build_parser()._actions for option in action.option_strings if option.startswith("--")}
    assert {option for option in options if not re.search(rf"(?<![\w-]){option}(?![\w-])", page)} == {"--help"}


def test_a_stalled_body_or_request_and_an_idle_connection_are_closed_within_the_read_timeout(impatient):
    """A body that stops short of its Content-Length gets 408 and the connection closes; a
    connection whose headers stop half-way, or that sends nothing, is closed: each within the
    deadline, each one line in the log, and the server goes on."""
    server, log = impatient
    before, started = len(log.read_text()), time.monotonic()
    body = json.dumps({"sentences": ["A dog."]}).encode()
    connections = [connect(server, head(len(body)) + body[:10]), connect(server, head(len(body))[:30]), connect(server)]
    answers = []
    for connection in connections:
        answers.append(until_closed(connection))
        assert READ_TIMEOUT - 0.1 <= time.monotonic() - started <= READ_TIMEOUT + LATE
    status, answer = answer_of(answers[0])
    assert status == 408 and "--read-timeout" in answer["error"] and answers[1:] == [b"", b""]
    lines = logged(log, before, 3)
    assert len(lines) == 3 and "Traceback" not in "\n".join(lines), lines
    assert sum('"POST /translate HTTP/1.1" 408' in line for line in lines) == 1
    assert sum(f"closed: no complete request within {READ_TIMEOUT} s" in line for line in lines) == 2
    assert call(server, "translate", {"sentences": ["A dog."], "beam": 1})[0] == 200


def test_a_client_that_leaves_during_its_body_is_one_line_in_the_log(served):
    """Where a client that closed its connection half-way through its body left a 46-line
    ClientDisconnect traceback: one line, and the server goes on."""
    server, log = served
    before = len(log.read_text())
    connection = connect(server, head(100) + b'{"sentences": ')
    time.sleep(0.3)  # the server is reading the body
    connection.close()
    lines = logged(log, before, 1)
    assert len(lines) == 1 and '"POST /translate" left after 14 of 100 bytes of its body' in lines[0], lines
    assert call(server, "translate", {"sentences": ["A dog."], "beam": 1})[0] == 200


def test_connections_beyond_max_connections_get_503_and_are_closed(impatient):
    server, _ = impatient
    held = [connect(server) for _ in range(MAX_CONNECTIONS)]
    status, answer = call(server, "health")
    assert status == 503 and "holds 4 connections already (rnnsearch-serve --max-connections)" in answer["error"]
    for connection in held:
        connection.close()
    deadline = time.monotonic() + LATE  # the server has yet to see them closed
    while call(server, "health")[0] != 200:
        assert time.monotonic() < deadline, "a connection closed by its client is still counted"
        time.sleep(0.1)


def test_sigterm_answers_the_requests_in_flight_and_stops_within_the_shutdown_timeout(checkpoint, multi30k, tmp_path):
    """SIGTERM as Ctrl-C: a request whose body completes after the signal is answered; one still
    waiting for its body --shutdown-timeout seconds later gets 503; an idle connection is closed;
    the server says it stopped and exits with 0 (it exited with 143, silently, and never while a
    body was pending)."""
    with logging_server(checkpoint, multi30k / "bin", tmp_path, "--shutdown-timeout", "1") as (server, process, log):
        body = json.dumps({"sentences": ["A dog runs."], "beam": 2}).encode()
        finishing, stalled, idle = connect(server, head(len(body)) + body[:5]), connect(server, head(len(body)) + body[:5]), connect(server)
        time.sleep(0.5)  # both requests are in flight
        signalled = time.monotonic()
        process.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        finishing.sendall(body[5:])
        answers = [until_closed(connection) for connection in (finishing, stalled, idle)]
        process.wait(timeout=1 + 2 * LATE)
        stopped_after = time.monotonic() - signalled
        said = process.stdout.read()
    assert process.returncode == 0 and said.strip() == "| rnnsearch-serve: stopped" and stopped_after < 1 + 2 * LATE
    (status, translated), (refused, why) = answer_of(answers[0]), answer_of(answers[1])
    assert status == 200 and translated["translations"][0]["source"] == "A dog runs."
    assert refused == 503 and "stopped before answering" in why["error"] and answers[2] == b""
    assert "Traceback" not in log.read_text()


def test_foreign_hosts_and_other_sites_pages_are_refused_and_the_pages_own_requests_answered(server):
    """DNS rebinding (another name for 127.0.0.1 as the Host) and another site's POST (its page as
    the Origin; a text/plain fetch or a form needs no preflight) are refused; the page's own POST
    (Chromium sends its Origin, http://127.0.0.1:PORT, on a same-origin POST) is answered, at
    127.0.0.1 as at localhost, and so are clients that send no Origin (curl, scripts)."""
    port = urlsplit(server).port
    body = json.dumps({"sentences": ["A dog."], "beam": 1}).encode()
    text = {"Content-Type": "text/plain"}
    cases = [  # (path, body, headers, status)
        ("health", None, {"Host": f"rebound.example:{port}"}, 400),
        ("translate", body, {"Host": f"rebound.example:{port}", "Origin": f"http://rebound.example:{port}", **text}, 400),
        ("translate", body, {"Origin": "http://elsewhere.example", **text}, 403),
        ("translate", body, {"Origin": f"http://127.0.0.1:{port + 1}", **text}, 403),  # another server of this machine
        ("translate", body, {"Origin": "null", **text}, 403),  # a sandboxed frame or a file
        ("translate", body, {"Origin": f"http://127.0.0.1:{port}", "Sec-Fetch-Site": "same-origin"}, 200),
        ("translate", body, {"Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"}, 200),
        ("health", None, {"Host": f"localhost:{port}"}, 200),
        ("translate", body, {}, 200),
    ]
    for path, sent, headers, status in cases:
        got, answer = ask(server, path, sent, headers)
        assert got == status, (headers, answer)
        if status == 400:
            assert f"Host 'rebound.example:{port}' is not a name this server answers to (127.0.0.1, localhost)" in answer["error"]
        if status == 403:
            assert f"only the server's own page (http://127.0.0.1:{port}/)" in answer["error"]


MALFORMED_HOSTS = ["evil.example@127.0.0.1:8000", "127.0.0.1:8000/evil", "127.0.0.1 :8000", "127.0.0.1:80a", "127.0.0.1:99999"]
MALFORMED_HOSTS += ["127.0.0.1:", "http://127.0.0.1", "::1", "[::1]x", "[127.0.0.1]", "[::1", "", "127.0.0.1\n"]


def test_a_host_that_is_not_host_and_port_is_malformed(server):
    """A Host is host[:port] (a name, an IPv4 address or a bracketed IPv6 one, and a numeric port):
    anything else is refused as malformed, even where the address it holds is one the server
    answers to (a server on every address answers to every one), while the same address sent as
    host[:port] is answered."""
    everywhere = AllowedHosts.listening("0.0.0.0", "0.0.0.0", ["my_proxy.example"])
    for host in MALFORMED_HOSTS:
        refused = everywhere.refusal({"host": host})
        assert refused is not None and refused.status == 400, host
        assert (
            str(refused)
            == f"Host {host!r} is malformed: send host[:port]: a name, an IPv4 address or an IPv6 address in brackets, and an optional port"
        )
    answered = ["127.0.0.1", "127.0.0.1:8000", "[::1]:8000", "[0:0::1]", "[::FFFF:127.0.0.1]:80", "My_Proxy.example:65535"]
    assert [everywhere.refusal({"host": host}) for host in answered] == [None] * len(answered)
    assert AllowedHosts.listening("::1", "::1", []).refusal({"host": "[0:0:0:0:0:0:0:1]:8000"}) is None  # the same address, written out
    port = urlsplit(server).port
    for host, status in ((f"evil.example@127.0.0.1:{port}", 400), (f"127.0.0.1:{port}/evil", 400), (f"127.0.0.1:{port}", 200)):
        got, answer = ask(server, "health", None, {"Host": host})
        assert got == status and (answer.get("error", "").startswith(f"Host {host!r} is malformed") or status == 200), (host, answer)


def test_the_allowed_hosts_are_the_names_the_server_listens_as_and_those_added():
    everywhere = AllowedHosts.listening("0.0.0.0", "0.0.0.0", ["Translate.Example:8000"])
    assert everywhere.names == {"0.0.0.0", "translate.example"}
    assert all(everywhere.refusal({"host": host}) is None for host in ("192.168.1.5:8000", "[fe80::1]:8000", "TRANSLATE.example"))
    assert [everywhere.refusal({"host": host}).status for host in ("rebound.example:8000", "", "[::1:8000")] == [400, 400, 400]
    loopback = AllowedHosts.listening("localhost", "::1", [])
    assert loopback.names == {"::1", "localhost"} and loopback.refusal({"host": "[::1]:8000"}) is None
    assert loopback.refusal({"host": "127.0.0.1:8000"}).status == 400  # an address it does not listen on
    assert loopback.refusal({"host": "[::1]:8000", "origin": "http://[::1]:8000"}) is None
