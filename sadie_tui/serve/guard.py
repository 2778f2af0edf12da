"""Safe by default: who may bind where, and which requests reach the routes.

A web page in the person's browser must not read their memory through localhost: a request
whose ``Host`` is not this server's own name (DNS rebinding) or whose ``Origin`` is another
site is refused with 403. On any address but loopback a bearer token is required to start,
and with a token every request must carry it (401 otherwise).
"""

from __future__ import annotations

import hmac
import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from ..engine.errors import UsageError
from .errors import HTTPProblem, problem_response

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})
WILDCARDS = frozenset({"0.0.0.0", "::", ""})


def is_loopback(host: str) -> bool:
    """``localhost`` or an address in 127.0.0.0/8 or ``::1``."""
    name = host.strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> str | None:
    """The token to require, or a ``UsageError`` when ``host`` is not loopback and there is
    no token: the memory must never be served to the network unauthenticated."""
    token = (token or "").strip() or None
    if not is_loopback(host) and token is None:
        raise UsageError(
            f"refusing to serve the memory on {host} without a token",
            fix="set SADIE_API_TOKEN or pass --token, or bind 127.0.0.1",
        )
    return token


def _split_host(value: str) -> tuple[str, int | None]:
    """``"[::1]:8765"`` → ``("::1", 8765)``; ``"localhost"`` → ``("localhost", None)``."""
    parts = urlsplit("//" + value)
    try:
        port = parts.port
    except ValueError:
        port = -1  # garbage after the colon: matches no port of ours
    return (parts.hostname or "").lower(), port


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


@dataclass
class Guard:
    """The rules for one server: its bound host and port, and the token if any."""

    host: str
    port: int
    token: str | None = None
    names: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        bound = self.host.strip("[]").lower()
        self.names = {*LOOPBACK_NAMES, "127.0.0.1", "::1", bound}
        if bound in WILDCARDS:
            # Bound to every address (with a token): this machine's own names also reach it.
            self.names |= {socket.gethostname().lower(), socket.getfqdn().lower()}

    def host_allowed(self, name: str) -> bool:
        if name in self.names or is_loopback(name):
            return True
        # On a wildcard bind any IP literal is an address of ours (rebinding needs a name).
        return self.host.strip("[]") in WILDCARDS and _is_ip(name)

    def origin_allowed(self, origin: str) -> bool:
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return False  # "null" (a file or sandboxed page) or something stranger
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            return False
        return self.host_allowed(parts.hostname.lower()) and port == self.port

    def check(self, headers: Iterable[tuple[bytes, bytes]]) -> None:
        """Raise the ``HTTPProblem`` a request with these headers gets, if any."""
        found: dict[bytes, str] = {}
        for key, value in headers:
            found.setdefault(key.lower(), value.decode("latin-1"))
        name, _ = _split_host(found.get(b"host", ""))
        if not self.host_allowed(name):
            raise HTTPProblem(
                403,
                f"this server does not answer for host {name or '(none)'!r}",
                kind="forbidden",
                fix="reach it as 127.0.0.1 or localhost",
            )
        origin = found.get(b"origin")
        if origin is not None and not self.origin_allowed(origin):
            raise HTTPProblem(
                403,
                f"requests from origin {origin!r} are refused",
                kind="forbidden",
                fix="only pages served by this server itself may call it",
            )
        if self.token is not None:
            scheme, _, given = found.get(b"authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(
                given.strip().encode(), self.token.encode()
            ):
                raise HTTPProblem(
                    401,
                    "a bearer token is required",
                    kind="unauthorized",
                    fix="send Authorization: Bearer <SADIE_API_TOKEN>",
                )


def over_unix_socket(scope: Scope) -> bool:
    """Whether the request came over the home's Unix socket: uvicorn gives such a request no
    ``server`` address (ASGI allows ``[path, None]``). The socket file is mode 0600, so only the
    person's own processes reach it, and no browser can: no Host, Origin or token check."""
    server = scope.get("server")
    return server is None or (isinstance(server[0], str) and server[1] is None)


def socket_only(request: Request, what: str) -> None:
    """403 unless the request came over a Unix socket (an ingest reads files with the
    holder's rights: only the person's own processes may ask for that)."""
    if not over_unix_socket(request.scope):
        raise HTTPProblem(
            403,
            f"{what} is served only on the memory's Unix socket, to the same user's sadie",
            kind="forbidden",
            fix=f"run `sadie {what}` on the machine that holds the memory",
        )


class GuardMiddleware:
    """Applies a ``Guard`` to every HTTP request before any route runs."""

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not over_unix_socket(scope):
            try:
                self.guard.check(scope["headers"])
            except HTTPProblem as exc:
                await problem_response(exc)(scope, receive, send)
                return
        await self.app(scope, receive, send)
