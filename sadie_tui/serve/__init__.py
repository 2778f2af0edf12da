"""`sadie serve`: the HTTP API over one in-process ``Session`` (routes, SSE and NDJSON streams,
the bearer token and the Origin/Host rules).

``create_app`` builds the ASGI app; ``server`` binds the socket and runs uvicorn.
"""

from .app import create_app

__all__ = ["create_app"]
