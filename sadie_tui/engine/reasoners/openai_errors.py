"""What an OpenAI-compatible server's failures mean: each one as the one-line ``ModelError``
(with its fix) that Ollama's would be, by status code; and whether a refusal names an option
the server does not take (``response_format``, ``stream_options``), which the reasoner then
stops sending."""

from __future__ import annotations

import json
import re

import httpx

from ..errors import (
    ModelError,
    ModelMissing,
    ModelStreamError,
    ModelTimeout,
    ModelUnreachable,
    in_words,
)

__all__ = ["REJECTED", "USAGE_REJECTED", "refuses", "translate"]

REJECTED = re.compile(r"response.?format|json.?schema|json.?object|not supported|unsupported")
USAGE_REJECTED = re.compile(r"stream.?options|include.?usage")


def _said(exc: BaseException) -> str:
    """What the server said, on one line (its error message, else the body)."""
    body = getattr(exc, "body", None)
    text = getattr(exc, "message", "") or str(exc)
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        text = body["message"]
    return " ".join(text.split())[:300]


def refuses(exc: BaseException, pattern: re.Pattern[str]) -> bool:
    """A status error whose message names what ``pattern`` matches (how a server says it does
    not take an option: 400, FastAPI's 422, or a 500 from a strict template)."""
    # lazy: openai loads only when refuses runs, off the start-up path
    import openai

    if not isinstance(exc, openai.APIStatusError) or exc.status_code not in (400, 422, 500, 501):
        return False
    body = json.dumps(exc.body) if exc.body is not None else ""
    return bool(pattern.search(f"{exc.message} {body}".lower()))


def translate(
    exc: BaseException,
    url: str,
    model: str,
    key_env: str = "OPENAI_API_KEY",
    *,
    keyed: bool = True,
) -> ModelError:
    """Client and transport failures as the one-line errors Ollama's have (by status code)."""
    # lazy: openai loads only when translate runs, off the start-up path
    import openai

    if isinstance(exc, ModelError):
        return exc
    if isinstance(exc, openai.APITimeoutError | httpx.TimeoutException):
        kind = "connect" if isinstance(exc.__cause__ or exc, httpx.ConnectTimeout) else "reply"
        return ModelTimeout(
            f"the model server at {url} timed out ({kind})",
            fix="the model may be loading or stuck; try again, or raise read_timeout in config",
        )
    if isinstance(exc, openai.APIConnectionError | httpx.ConnectError | ConnectionError):
        return ModelUnreachable(
            f"the model server is not reachable at {url}",
            fix="start it, for example `llama-server -m MODEL.gguf`, or set OPENAI_BASE_URL",
        )
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        if not keyed:
            return ModelError(
                f"the model server at {url} wants an API key ({exc.status_code})",
                fix=f"set {key_env}",
            )
        return ModelError(
            f"the model server at {url} refused the API key ({exc.status_code})",
            fix=f"set {key_env} to a key it accepts",
        )
    if isinstance(exc, openai.NotFoundError):
        if "model" in _said(exc).lower():
            return ModelMissing(
                f"the model {model} is not served at {url}",
                fix="set SADIE_MODEL to one it serves; `sadie doctor` lists them",
            )
        return ModelError(
            f"{url} has no chat completions endpoint (404)",
            fix="check OPENAI_BASE_URL; it usually ends in /v1",
        )
    if isinstance(exc, openai.APIStatusError):
        return ModelError(f"the model server answered {exc.status_code}: {_said(exc)}")
    if isinstance(exc, openai.APIError):  # an error event in the middle of the stream
        return ModelStreamError(f"the model stopped with an error mid-reply: {_said(exc)}")
    if isinstance(exc, httpx.HTTPError):
        return ModelStreamError(
            f"the connection to the model server broke mid-reply: {in_words(exc)}"
        )
    return ModelError(f"unexpected model failure: {in_words(exc)}")
