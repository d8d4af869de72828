"""Which requests rnnsearch-serve answers: those addressed to a name it listens as, and, from a
browser, only those of its own page.

A page on another site can reach a server on 127.0.0.1 through DNS rebinding (its own name made to
resolve to 127.0.0.1: the browser then sends that name as the Host), and can POST to any address in
a form or a ``text/plain`` fetch. So the Host must name the server: the address it listens on,
``localhost`` when that is this machine's loopback, any IP address when it listens on all of them
(``0.0.0.0``, ``::``; an address cannot be rebound), and the names given with --allowed-host (a
name in DNS, or the one a proxy passes on). A browser names the page that sent a request in its
Origin header (on every POST, and on a cross-origin fetch); a request whose Origin is not the
server's own (the Host it was sent to) is refused. Clients other than browsers (curl, scripts) send
no Origin and are answered.
"""

import ipaddress
import re
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional

from .requests import RequestError

# A Host header as HTTP defines it, host[:port]: a name or an IPv4 address (labels of letters, digits,
# - and _, joined by dots), or an IPv6 address in brackets, and an optional port. Nothing else, so
# that no userinfo ("evil.example@127.0.0.1"), path or space hides another name in it.
HOST = re.compile(r"(?:(?P<name>[\w-]+(?:\.[\w-]+)*)|\[(?P<ipv6>[0-9A-Fa-f:.]+)\])(?::(?P<port>[0-9]{1,5}))?", re.ASCII)
MALFORMED = "send host[:port]: a name, an IPv4 address or an IPv6 address in brackets, and an optional port"


def is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def hostname(host: str) -> Optional[str]:
    """The name or address of a Host header ("[::1]:8000" -> "::1"), lower-case, an address as
    Python writes it; None where the header is not host[:port] (``HOST``), or its port not one."""
    match = HOST.fullmatch(host)
    if match is None or int(match["port"] or 0) > 65535:
        return None
    if match["ipv6"] is None:
        return match["name"].lower()
    try:
        return str(ipaddress.IPv6Address(match["ipv6"]))
    except ValueError:
        return None


def configured_name(value: str) -> Optional[str]:
    """The name or address of a --host or --allowed-host value: host[:port] as a Host names it,
    or an IPv6 address without brackets; None if it is neither."""
    value = value.strip()
    return str(ipaddress.ip_address(value)) if is_address(value) else hostname(value)


@dataclass(frozen=True)
class AllowedHosts:
    """The names the server answers to; with ``any_address``, every IP address too."""

    names: frozenset[str]
    any_address: bool

    @classmethod
    def listening(cls, host: str, address: str, others: Iterable[str]) -> "AllowedHosts":
        """The hosts of a server started with ``--host host`` and bound to ``address``, and ``others`` (--allowed-host)."""
        bound = ipaddress.ip_address(address)
        names = {configured_name(name) for name in (host, address, *others)} | ({"localhost"} if bound.is_loopback else set())
        return cls(frozenset(name for name in names if name is not None), bound.is_unspecified)

    def allows(self, name: str) -> bool:
        return name in self.names or (self.any_address and is_address(name))

    def refusal(self, headers: Mapping[str, str]) -> Optional[RequestError]:
        """Why a request with these headers is refused (400 a malformed or foreign Host, 403 another
        site's page), or None."""
        host = headers.get("host", "")
        name = hostname(host)
        if name is None:
            return RequestError(400, f"Host {host!r} is malformed: {MALFORMED}")
        if not self.allows(name):
            listed = ", ".join(sorted(self.names)) + (", any IP address of this machine" if self.any_address else "")
            return RequestError(
                400, f"Host {host!r} is not a name this server answers to ({listed}): start it with --allowed-host NAME to add one"
            )
        origin = headers.get("origin")
        if origin is not None and origin.partition("://")[2].lower() != host.lower():  # scheme://host[:port], or "null"
            return RequestError(
                403, f"a request from the page of {origin}, another site: only the server's own page (http://{host}/) may send requests"
            )
        return None
