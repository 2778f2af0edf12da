"""What a model server sent when it was not the model's reply: a reply cut before the
server's end marker, or a body of another kind (a proxy's HTML error page, plain text), named
in one line so the person sees what came back instead of "nothing to show"."""

from __future__ import annotations

import html
import re

from ..errors import ModelError, ModelStreamError

_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.I | re.S)
_TAG = re.compile(r"<[^>]*>")


def cut_short(url: str, marker: str) -> ModelStreamError:
    """A stream that ended cleanly but before its end marker (``marker``): the reply is cut."""
    return ModelStreamError(
        f"the model server at {url} closed the reply before its end (no {marker})",
        fix="ask again; if it keeps happening, check the server or a proxy in front of it",
    )


def not_a_reply(url: str, body: str, content_type: str = "") -> ModelError:
    """A body that is not the model's reply, said as what it is: a web page by its title,
    anything else by its first words."""
    text = body.strip()
    if text.startswith("{") and not content_type.startswith("text/html"):
        return cut_short(url, "end of its last JSON line")
    if content_type.startswith("text/html") or text[:15].lower().startswith(("<!doctype", "<html")):
        found = _TITLE.search(text)
        inner = found.group(1) if found else _TAG.sub(" ", text)
        words = " ".join(html.unescape(inner).split())[:80]
        what = f"a web page (HTML: “{words}”)" if words else "an empty web page (HTML)"
    else:
        words = " ".join(text.split())[:80]
        kind = content_type.split(";")[0].strip() or "something else"
        what = f"{kind} (“{words}”)" if words else f"an empty {kind} body"
    return ModelError(
        f"the model server at {url} sent {what} instead of the model's reply",
        fix="check the address: it may be a proxy or another server, not the model's",
    )
