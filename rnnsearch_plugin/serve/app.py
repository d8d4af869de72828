"""rnnsearch-serve's Starlette application: the page and the JSON API.

    GET  /            the page (static/index.html; its script and style sheet under /static/)
    GET  /health      the model, its architecture, dictionaries (file names), limits and queue
    POST /translate   beam search with n-best lists, scores and soft alignments
    POST /score       log p(target | source) of given pairs, with their soft alignments

Every error is a JSON object {"error": "one line"} with its HTTP status (``requests.py``; 404,
405, 503 when the queue is full, 500 for a failure of the model, which the server survives).
"""

import asyncio
import logging
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Hashable, Mapping, Optional

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..hub import RNNSearchHubInterface
from .batcher import Batcher, QueueFull
from .requests import Limits, RequestError, parse_body, score_request, translate_request
from .translator import describe, run_batch

STATIC = Path(__file__).parent / "static"
logger = logging.getLogger(__name__)


async def read_body(request: Request, limit: int) -> bytes:
    """The request's body, refused (413) as soon as it is longer than ``limit`` bytes."""
    declared = request.headers.get("content-length", "")
    too_long = RequestError(413, f"the request body is over {limit:,} bytes (rnnsearch-serve --max-request-bytes)")
    if declared.isdigit() and int(declared) > limit:
        raise too_long
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise too_long
    return bytes(body)


def error_response(status: int, message: str, headers: Optional[Mapping[str, str]] = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


async def request_error(request: Request, error: Exception) -> Response:
    if isinstance(error, RequestError):
        return error_response(error.status, str(error))
    if isinstance(error, QueueFull):
        return error_response(503, f"the server is busy: {error}; retry shortly", {"Retry-After": "1"})
    assert isinstance(error, HTTPException)
    return error_response(
        error.status_code,
        f"{error.detail}: {request.method} {request.url.path} (the API: GET /health, POST /translate, POST /score)",
        error.headers,
    )


async def server_error(request: Request, error: Exception) -> Response:
    return error_response(500, f"the model failed on this request ({type(error).__name__}: {error}); the server goes on")


def create_app(model: RNNSearchHubInterface, checkpoint: Path, data: Path, limits: Limits, health_paths: bool = False) -> Starlette:
    """The application; /health names the checkpoint and dictionaries by their absolute paths
    only with ``health_paths`` (by their file names otherwise)."""
    batcher = Batcher(partial(run_batch, model), limits.batch_sentences, limits.max_waiting)
    info = describe(model, checkpoint, data, health_paths)
    attentive = info["attention"]

    async def answer(request: Request, parse: Callable[[dict[str, Any]], tuple[Hashable, list[Any]]], field: str) -> Response:
        key, items = parse(parse_body(await read_body(request, limits.max_request_bytes)))
        return JSONResponse({field: await asyncio.wrap_future(batcher.submit(key, items))})

    async def translate(request: Request) -> Response:
        return await answer(request, lambda body: translate_request(body, limits, model.encode, attentive), "translations")

    async def score(request: Request) -> Response:
        return await answer(request, lambda body: score_request(body, limits, model.encode, model.encode_target, attentive), "scores")

    async def health(request: Request) -> Response:
        return JSONResponse({**info, "limits": limits.as_dict(), "queue": batcher.stats()})

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html")

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        batcher.start()
        yield
        batcher.stop()

    routes = [
        Route("/", page),
        Route("/health", health),
        Route("/translate", translate, methods=["POST"]),
        Route("/score", score, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    handlers = {RequestError: request_error, QueueFull: request_error, HTTPException: request_error, Exception: server_error}
    return Starlette(routes=routes, exception_handlers=handlers, lifespan=lifespan)
