"""rnnsearch-serve's HTTP connections: uvicorn's h11 protocol, with a deadline on each request's
headers and a cap on the connections open at once.

uvicorn closes a connection left idle after an answer (its keep-alive timeout), but neither one
that never sends a request nor one whose headers stop half-way (its timer stops at the first
byte): such connections stayed open as long as their clients wished. Here a request must arrive
(its headers complete) within --read-timeout seconds of the connection opening or of the previous
answer, or the connection is closed, with one line in the log; its body has a deadline of its own
(``app.read_body``). A connection beyond --max-connections gets 503 for its request, in JSON as
every error of the API, and is closed.
"""

import asyncio
import logging
from typing import Any, Optional

from uvicorn.protocols.http.h11_impl import H11Protocol, RequestResponseCycle

from .app import CLOSE, error_response

logger = logging.getLogger(__name__)


class DeadlineH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a request deadline and a connection cap (uvicorn's ``http=``,
    given ``read_timeout`` and ``max_connections`` with functools.partial)."""

    def __init__(self, *args: Any, read_timeout: float, max_connections: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.read_timeout, self.max_connections = read_timeout, max_connections
        self.deadline: Optional[asyncio.TimerHandle] = None

    def connection_made(self, transport: asyncio.Transport) -> None:
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:  # the application uvicorn runs for this connection's request
            self.app = error_response(
                503,
                f"the server holds {self.max_connections:,} connections already (rnnsearch-serve --max-connections); retry shortly",
                {"Retry-After": "1", **CLOSE},
            )
        self.await_request(None)

    def on_response_complete(self) -> None:
        answered = self.cycle
        super().on_response_complete()
        if not self.transport.is_closing():
            self.await_request(answered)

    def connection_lost(self, exc: Optional[Exception]) -> None:
        self.cancel_deadline()
        super().connection_lost(exc)

    def await_request(self, answered: Optional[RequestResponseCycle]) -> None:
        """Close the connection unless a request after ``answered`` (None: the first) has come within the deadline."""
        self.cancel_deadline()
        self.deadline = self.loop.call_later(self.read_timeout, self.close_if_no_request, answered)

    def close_if_no_request(self, answered: Optional[RequestResponseCycle]) -> None:
        if self.cycle is answered and not self.transport.is_closing():
            client = "%s:%d" % self.client if self.client else "a client"
            logger.info("%s - closed: no complete request within %s s (rnnsearch-serve --read-timeout)", client, self.read_timeout)
            self.transport.close()

    def cancel_deadline(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None
