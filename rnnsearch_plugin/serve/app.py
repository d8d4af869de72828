"""rnnsearch-serve's Starlette application: the page and the JSON API.

    GET  /            the page (static/index.html; its script and style sheet under /static/)
    GET  /health      the model, its architecture, dictionaries (file names), limits and queue
    POST /translate   beam search with n-best lists, scores and soft alignments
    POST /score       log p(target | source) of given pairs, with their soft alignments

Every error is a JSON object {"error": "one line"} with its HTTP status (``requests.py``; 404,
405, 503 when the queue is full or the server stopped before answering, 500 for a failure of the
model, which the server survives). Requests for a Host the server does not answer to, or from
another site's page, are refused (``hosts.py``).
"""

import asyncio
import logging
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Hashable, Mapping, Optional

from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from ..hub import RNNSearchHubInterface
from .batcher import Batcher, QueueFull
from .hosts import AllowedHosts
from .requests import Limits, RequestError, parse_body, score_request, translate_request
from .translator import describe, run_batch

STATIC = Path(__file__).parent / "static"
logger = logging.getLogger(__name__)


CLOSE = {"Connection": "close"}  # for an answer sent before the request's body was read to its end


def received(body: bytearray, declared: str) -> str:
    """How much of a body came: "10 of 100 bytes", or "10 bytes" without a Content-Length."""
    return f"{len(body):,} of {int(declared):,} bytes" if declared.isdigit() else f"{len(body):,} bytes"


async def read_body(request: Request, limits: Limits) -> bytes:
    """The request's body, refused (413) as soon as it is longer than ``limits.max_request_bytes``,
    or (408) when it is not complete within ``limits.read_timeout`` seconds. A client that leaves
    before the end of its body is one line in the log."""
    limit, declared = limits.max_request_bytes, request.headers.get("content-length", "")
    too_long = RequestError(413, f"the request body is over {limit:,} bytes (rnnsearch-serve --max-request-bytes)")
    if declared.isdigit() and int(declared) > limit:
        raise too_long
    body = bytearray()
    try:
        async with asyncio.timeout(limits.read_timeout):
            async for chunk in request.stream():
                body += chunk
                if len(body) > limit:
                    raise too_long
    except TimeoutError:
        late = f"the request body did not arrive within {limits.read_timeout} s ({received(body, declared)} came)"
        raise RequestError(408, f"{late} (rnnsearch-serve --read-timeout)", CLOSE) from None
    except ClientDisconnect:
        client = f"{request.client.host}:{request.client.port}" if request.client else "a client"
        logger.info('%s - "%s %s" left after %s of its body', client, request.method, request.url.path, received(body, declared))
        raise RequestError(400, "the client closed the connection before the end of its body") from None  # an answer nobody reads
    return bytes(body)


def error_response(status: int, message: str, headers: Optional[Mapping[str, str]] = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def refused(error: RequestError) -> JSONResponse:
    return error_response(error.status, str(error), error.headers)


class KnownHostsOnly:
    """ASGI middleware: every request for a Host the server does not answer to, or from another
    site's page, refused before the application sees it (``hosts.py``)."""

    def __init__(self, app: ASGIApp, hosts: AllowedHosts) -> None:
        self.app, self.hosts = app, hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = self.hosts.refusal(Headers(scope=scope)) if scope["type"] == "http" else None
        await (self.app if refusal is None else refused(refusal))(scope, receive, send)


async def request_error(request: Request, error: Exception) -> Response:
    if isinstance(error, RequestError):
        return refused(error)
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


def create_app(
    model: RNNSearchHubInterface, checkpoint: Path, data: Path, limits: Limits, hosts: AllowedHosts, health_paths: bool = False
) -> Starlette:
    """The application, answering the requests for ``hosts``; /health names the checkpoint and
    dictionaries by their absolute paths only with ``health_paths`` (by their file names otherwise)."""
    batcher = Batcher(partial(run_batch, model), limits.batch_sentences, limits.max_waiting)
    info = describe(model, checkpoint, data, health_paths)
    attentive = info["attention"]

    async def answer(request: Request, parse: Callable[[dict[str, Any]], tuple[Hashable, list[Any]]], field: str) -> Response:
        try:
            key, items = parse(parse_body(await read_body(request, limits)))
            return JSONResponse({field: await asyncio.wrap_future(batcher.submit(key, items))})
        except asyncio.CancelledError:  # uvicorn ends what is still in flight --shutdown-timeout after SIGTERM or Ctrl-C
            raise RequestError(503, "the server stopped before answering (rnnsearch-serve --shutdown-timeout); retry", CLOSE) from None

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
    return Starlette(routes=routes, middleware=[Middleware(KnownHostsOnly, hosts=hosts)], exception_handlers=handlers, lifespan=lifespan)
