"""rnnsearch-serve: translate over HTTP, and watch the soft alignment in a browser.

    rnnsearch-serve --path CHECKPOINT --data DATA/bin [--host 127.0.0.1 --port 8000]

The data folder's ../manifest.json gives the tokeniser and subword model, as ``load`` reads
it. The server binds to 127.0.0.1 (this machine only) unless --host says otherwise; --port 0
takes a free port. It prints where it listens once the model is loaded. One process, one model:
requests are queued and batched onto it (``batcher.py``). The page is at /, the API at /health,
/translate and /score (docs/serve.md). It answers requests for the names it listens as and those
of --allowed-host, from clients that are not browsers and from its own page. SIGTERM, as Ctrl-C,
stops it: the requests in flight are answered (within --shutdown-timeout), then it says it stopped.
"""

import argparse
import signal
import socket
import sys
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Iterator

import torch
import uvicorn

from ..fairseq_fixes.cli_errors import explain
from ..hub import RNNSearchHubInterface, load
from ..truncation import source_limit
from .app import create_app
from .connections import DeadlineH11Protocol
from .hosts import AllowedHosts
from .requests import Limits

PROGRAM = "rnnsearch-serve"


def port(text: str) -> int:
    """A --port: a TCP port number, 0 to 65535 (argparse names the option in the error)."""
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port: give 1 to 65535, or 0 for a free one")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROGRAM, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--path", type=Path, required=True, help="checkpoint")
    parser.add_argument("--data", type=Path, required=True, help="the fairseq-binarized folder the model was trained on")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s, this machine only)")
    parser.add_argument("--port", type=port, default=8000, help="port (default: %(default)s; 0 takes a free one)")
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another name the server answers to, as the Host of its address (a name in DNS, or the one a proxy passes on); "
        "repeat for more (default: the address it listens on, localhost on this machine's loopback, every IP address on 0.0.0.0 or ::)",
    )
    parser.add_argument("--cpu", action="store_true", help="run on the CPU even where CUDA is available")
    parser.add_argument(
        "--health-paths",
        action="store_true",
        help="/health gives the absolute paths of the checkpoint and dictionaries (default: their file "
        "names; every client that reaches the port reads /health)",
    )
    limits = parser.add_argument_group("limits")
    for name, default in Limits().as_dict().items():
        limits.add_argument(
            f"--{name.replace('_', '-')}", type=int, default=default, metavar="N", help=f"{Limits.help()[name]} (default: {default:,})"
        )
    return parser


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(argv)
    for name in Limits().as_dict():
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to (host, port) before the model loads, so a taken port fails at once."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family)
    except OSError as error:
        sys.exit(f"{PROGRAM}: error: cannot listen on {host}:{port}: {error.strerror or error} (give another --port or --host)")


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    limits = Limits(**{name: getattr(args, name) for name in Limits().as_dict()})
    if not args.path.is_file() or not args.data.is_dir():
        missing = ("--path", args.path) if not args.path.is_file() else ("--data", args.data)
        sys.exit(f"{PROGRAM}: error: {missing[0]} {missing[1]}: no such {'file' if missing[0] == '--path' else 'folder'}")
    server_socket = listen(args.host, args.port)
    try:
        model = load(args.path, args.data)
    except Exception as error:
        message = explain(error)
        if message is None:
            raise
        sys.exit(f"{PROGRAM}: error: {message}")
    accepted = source_limit(model.max_positions)
    if accepted is not None and limits.max_sentence_tokens > accepted:
        sys.exit(
            f"{PROGRAM}: error: --max-sentence-tokens {limits.max_sentence_tokens} is more than the model "
            f"accepts ({accepted}, its --max-source-positions)"
        )
    if torch.cuda.is_available() and not args.cpu:
        model.cuda()
    serve(model, args, limits, server_socket)


@contextmanager
def sigterm_as_ctrl_c() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt, as Ctrl-C does. uvicorn shuts down gracefully on either,
    then raises the signal again once its own handlers are gone: SIGTERM's default handler then
    ended the process (exit 143) before it could say it stopped."""
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def serve(model: RNNSearchHubInterface, args: argparse.Namespace, limits: Limits, server_socket: socket.socket) -> None:
    host, port = server_socket.getsockname()[:2]
    address = f"[{host}]" if ":" in host else host
    hosts = AllowedHosts.listening(args.host, host, args.allowed_host)
    app = create_app(model, args.path.resolve(), args.data.resolve(), limits, hosts, args.health_paths)
    protocol = partial(DeadlineH11Protocol, read_timeout=limits.read_timeout, max_connections=limits.max_connections)
    config = uvicorn.Config(
        app,
        log_config=None,
        http=protocol,  # type: ignore[arg-type]  # uvicorn calls it as it calls a protocol class
        timeout_keep_alive=limits.read_timeout,
        timeout_graceful_shutdown=limits.shutdown_timeout,
    )
    print(
        f"| {PROGRAM}: {args.path} listening on http://{address}:{port}/ (the page; the API: GET /health, POST /translate, POST /score)",
        flush=True,
    )
    try:
        with sigterm_as_ctrl_c():
            uvicorn.Server(config).run(sockets=[server_socket])
    except KeyboardInterrupt:  # uvicorn shuts down gracefully on Ctrl-C or SIGTERM, then raises it again
        pass
    print(f"| {PROGRAM}: stopped", flush=True)
