"""The JSON API's requests: parsed, checked against the server's limits, or refused with a
one-line message and the HTTP status that fits (400 a malformed request, 408 one not sent within
--read-timeout, 413 one too large, 422 values the model cannot serve).

    POST /translate {"sentences": ["A dog runs."], "beam": 5, "nbest": 1, "alignment": true, "pieces": false}
    POST /score     {"pairs": [{"source": "A dog runs.", "target": "Un chien court."}], "alignment": true}
"""

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Callable, Mapping, Optional

import torch

from .. import arguments
from ..json_input import InvalidJSON, parse_json
from .translator import ScoreItem, TranslateItem


class RequestError(Exception):
    """A request the server refuses: its HTTP status, a one-line message and the headers of the
    answer (``Connection: close`` for a request whose body is left unread)."""

    def __init__(self, status: int, message: str, headers: Optional[Mapping[str, str]] = None) -> None:
        super().__init__(message)
        self.status, self.headers = status, headers


@dataclass(frozen=True)
class Limits:
    """What one request may ask for, how the server batches, how long it waits for a client and
    how many it holds (rnnsearch-serve's options)."""

    max_sentences: int = field(default=32, metadata={"help": "sentences (or pairs) in one request"})
    max_sentence_tokens: int = field(default=200, metadata={"help": "subword tokens of one sentence, </s> included"})
    max_beam: int = field(default=12, metadata={"help": "beam size; n-best is 1 to the beam"})
    max_request_bytes: int = field(default=1_000_000, metadata={"help": "bytes of one request's body"})
    max_waiting: int = field(default=256, metadata={"help": "requests waiting for the model; more get 503"})
    batch_sentences: int = field(default=64, metadata={"help": "sentences the model translates in one batch"})
    read_timeout: int = field(
        default=10,
        metadata={
            "help": "seconds a client has to send a request's headers (from its connection or the previous answer), "
            "then its body; an idle connection is closed after them, a late body gets 408"
        },
    )
    max_connections: int = field(default=512, metadata={"help": "connections open at once; the requests of more get 503"})
    shutdown_timeout: int = field(
        default=30, metadata={"help": "seconds SIGTERM or Ctrl-C waits for the requests in flight; those still unanswered get 503"}
    )

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    @staticmethod
    def help() -> dict[str, str]:
        return {spec.name: spec.metadata["help"] for spec in fields(Limits)}


TRANSLATE_FIELDS = {"sentences", "beam", "nbest", "alignment", "pieces"}
SCORE_FIELDS = {"pairs", "alignment", "pieces"}


def parse_body(body: bytes) -> dict[str, Any]:
    """The request's JSON object, or RequestError(400) naming what is wrong with the body (JSON
    nested too deep or an integer too long included: ``parse_json``)."""
    if not body.strip():
        raise RequestError(400, 'empty request body: send a JSON object such as {"sentences": ["A dog runs."]}')
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise RequestError(400, f"the request body is not UTF-8 (byte {error.start}): send JSON encoded as UTF-8") from None
    try:
        value = parse_json(text)
    except InvalidJSON as error:
        raise RequestError(400, f'invalid JSON: {error}: send a JSON object such as {{"sentences": ["A dog runs."]}}') from None
    if not isinstance(value, dict):
        raise RequestError(400, f"expected a JSON object, got {type(value).__name__}")
    return value


def check_fields(request: dict[str, Any], allowed: set[str]) -> None:
    unknown = sorted(set(request) - allowed)
    if unknown:
        raise RequestError(400, f"unknown field {unknown[0]!r}: the fields are {', '.join(sorted(allowed))}")


def integer(request: dict[str, Any], name: str, default: int, low: int, high: int) -> int:
    try:
        return arguments.integer(request.get(name, default), name, low, high)
    except (TypeError, ValueError) as error:  # the Python API's checks: a wrong type is malformed, a wrong value unservable
        raise RequestError(400 if isinstance(error, TypeError) else 422, str(error)) from None


def flag(request: dict[str, Any], name: str, default: bool) -> bool:
    value = request.get(name, default)
    if not isinstance(value, bool):
        raise RequestError(400, f"{name!r} must be true or false, got {json.dumps(value)[:40]}")
    return value


def listed(request: dict[str, Any], name: str, limits: Limits) -> list[Any]:
    """The request's non-empty list ``name``, at most ``limits.max_sentences`` long."""
    value = request.get(name)
    if not isinstance(value, list) or not value:
        raise RequestError(400, f"{name!r} must be a non-empty list")
    if len(value) > limits.max_sentences:
        raise RequestError(
            413,
            f"{len(value)} {name} in one request, more than the limit of {limits.max_sentences} "
            "(rnnsearch-serve --max-sentences): split the request",
        )
    return value


def text(value: Any, what: str) -> str:
    try:
        return arguments.text(value, what)
    except (TypeError, ValueError) as error:  # not a string, or not valid Unicode
        raise RequestError(400, str(error)) from None


def within_limit(tokens: torch.Tensor, what: str, limits: Limits) -> torch.Tensor:
    if len(tokens) > limits.max_sentence_tokens:
        raise RequestError(
            413,
            f"{what} has {len(tokens)} subword tokens with </s>, more than the limit of "
            f"{limits.max_sentence_tokens} (rnnsearch-serve --max-sentence-tokens): shorten or split it",
        )
    return tokens


def alignment_flag(request: dict[str, Any], attentive: bool) -> bool:
    """Whether to return soft alignments: by default for RNNsearch; RNNencdec has none (422)."""
    wanted = flag(request, "alignment", attentive)
    if wanted and not attentive:
        raise RequestError(
            422,
            "this is an RNNencdec model: it has no attention, so no alignment to return "
            '(leave out "alignment" or serve an rnnsearch model)',
        )
    return wanted


Encode = Callable[[str], torch.Tensor]


def translate_request(
    request: dict[str, Any], limits: Limits, encode: Encode, attentive: bool
) -> tuple[tuple[str, int, int], list[TranslateItem]]:
    """The batching key (beam, n-best) and the items of a /translate request."""
    check_fields(request, TRANSLATE_FIELDS)
    sentences = listed(request, "sentences", limits)
    beam = integer(request, "beam", min(5, limits.max_beam), 1, limits.max_beam)
    nbest = integer(request, "nbest", 1, 1, beam)
    alignment, pieces = alignment_flag(request, attentive), flag(request, "pieces", False)
    items = []
    for index, sentence in enumerate(sentences):
        sentence = text(sentence, f"sentence {index}")
        items.append(TranslateItem(sentence, within_limit(encode(sentence), f"sentence {index}", limits), alignment, pieces))
    return ("translate", beam, nbest), items


def score_request(
    request: dict[str, Any], limits: Limits, encode: Encode, encode_target: Encode, attentive: bool
) -> tuple[tuple[str], list[ScoreItem]]:
    """The batching key and the items of a /score request."""
    check_fields(request, SCORE_FIELDS)
    pairs = listed(request, "pairs", limits)
    alignment, pieces = alignment_flag(request, attentive), flag(request, "pieces", False)
    items = []
    for index, pair in enumerate(pairs):
        if not isinstance(pair, dict) or set(pair) != {"source", "target"}:
            raise RequestError(400, f'pair {index} must be an object {{"source": "...", "target": "..."}}')
        source, target = text(pair["source"], f"pair {index}'s source"), text(pair["target"], f"pair {index}'s target")
        items.append(
            ScoreItem(
                source,
                target,
                within_limit(encode(source), f"pair {index}'s source", limits),
                within_limit(encode_target(target), f"pair {index}'s target", limits),
                alignment,
                pieces,
            )
        )
    return ("score",), items
