"""The served OpenAPI document cannot drift from the code: it is valid OpenAPI 3.1, it names
exactly the app's real routes, each schema in it is its shape's own, and a real answer from
every route (the real server on loopback over the small real memory, offline reasoner)
validates against the schema documented for its status, with no field the shape lacks.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from openapi_schema_validator import OAS31Validator
from openapi_spec_validator import validate as validate_openapi
from pydantic import TypeAdapter

from sadie_tui.config import load_settings
from sadie_tui.engine.memory import Memory
from sadie_tui.engine.session import Session
from sadie_tui.engine.wire import REF_TEMPLATE, WireSchema
from sadie_tui.serve.app import create_app
from sadie_tui.serve.holder import hold
from sadie_tui.serve.openapi import Route, routes, spec
from sadie_tui.serve.shapes import Error
from tests.support.fake_session import FakeSession
from tests.support.serve import Running, running

TIMEOUT = 60.0


def _operation(doc: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    return doc["paths"][path][method.lower()]


# -- the document itself -----------------------------------------------------------------------
def test_the_document_is_valid_openapi_3_1() -> None:
    doc = spec()
    assert doc["openapi"] == "3.1.0"
    validate_openapi(doc)


def test_the_validator_would_catch_a_broken_document() -> None:
    # A guard on the test above: a dangling reference is refused.
    doc = copy.deepcopy(spec())
    answer = _operation(doc, "POST", "/v1/ask")["responses"]["200"]["content"]
    answer["application/json"]["schema"] = {"$ref": "#/components/schemas/Nowhere"}
    with pytest.raises(Exception, match="Nowhere"):
        validate_openapi(doc)


def test_every_route_of_the_app_is_documented_and_nothing_else(tmp_path: Path) -> None:
    app = create_app(FakeSession(tmp_path), warm=False)
    served = {
        (route.path, method.lower())
        for route in app.routes
        for method in getattr(route, "methods", None) or ()
        if method != "HEAD"
    }
    described = {(path, method) for path, ops in spec()["paths"].items() for method in ops}
    assert len(served) > 20  # the app's own routes were found
    assert served == described


def _expected(shape: Any, mode: str) -> dict[str, Any]:
    """The shape's JSON Schema as pydantic makes it on its own (nested shapes in ``$defs``)."""
    return TypeAdapter(shape).json_schema(
        mode=mode,  # type: ignore[arg-type]
        ref_template=REF_TEMPLATE,
        schema_generator=WireSchema,
    )


def _same_schema(documented: dict[str, Any], shape: Any, mode: str) -> None:
    components = spec()["components"]["schemas"]
    expected = _expected(shape, mode)
    defs = expected.pop("$defs", {})
    ref = documented.get("$ref", "")
    if ref.startswith("#/components/schemas/"):
        documented = components[ref.rsplit("/", 1)[1]]
    assert documented == expected, shape
    for name, schema in defs.items():
        assert components[name] == schema, name


ROUTES = routes()


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: f"{r.method} {r.path}")
def test_each_documented_schema_is_its_shapes_own(route: Route) -> None:
    operation = _operation(spec(), route.method, route.path)
    for answer in route.answers:
        content = operation["responses"][str(answer.status)]["content"][answer.media]
        _same_schema(content["schema"], answer.shape, "serialization")
    for status in route.errors:
        content = operation["responses"][str(status)]["content"]["application/json"]
        _same_schema(content["schema"], Error, "serialization")
    if route.request is not None:
        body = operation["requestBody"]["content"]["application/json"]["schema"]
        _same_schema(body, route.request, "validation")
    documented = {p["name"]: p for p in operation.get("parameters", [])}
    assert set(documented) == {p.name for p in route.params}
    for param in route.params:
        _same_schema(documented[param.name]["schema"], param.shape, "validation")
        assert ("{" + param.name + "}" in route.path) == (param.where == "path")


def test_a_new_field_reaches_the_document_by_itself() -> None:
    # Adding a field to a shape is one edit: the dataclass's. Its schema (and so the
    # document's) follows, as the dump and the decoding do.
    from dataclasses import make_dataclass

    from sadie_tui.engine.wire import dump, load, schema_of

    grown = make_dataclass("Grown", [("id", str), ("mood", str, "calm")], frozen=True)
    assert "mood" in schema_of(grown)["properties"]
    assert dump(grown("a")) == {"id": "a", "mood": "calm"}
    assert load(grown, {"id": "a", "mood": "wry"}) == grown("a", "wry")


# -- real answers ------------------------------------------------------------------------------
def _closed(schema: Any) -> Any:
    """``schema`` with every object that lists its properties closed to others, so an answer
    with a field its shape lacks fails validation."""
    if isinstance(schema, dict):
        out = {k: _closed(v) for k, v in schema.items()}
        if "properties" in out and "additionalProperties" not in out:
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_closed(v) for v in schema]
    return schema


class Checker:
    """Calls the real server and checks each answer against the document, keeping which
    routes were answered."""

    def __init__(self, api: Running) -> None:
        self.client = httpx.Client(base_url=api.url, timeout=TIMEOUT)
        self.doc = spec()
        self.components = _closed(self.doc["components"])
        self.seen: set[tuple[str, str, int]] = set()

    def _schema(self, method: str, path: str, status: int, media: str) -> dict[str, Any]:
        responses = _operation(self.doc, method, path)["responses"]
        assert str(status) in responses, f"{method} {path} answered an undocumented {status}"
        content = responses[str(status)]["content"]
        assert media in content, f"{method} {path} {status} answered undocumented {media}"
        return {**_closed(content[media]["schema"]), "components": self.components}

    def validate(self, method: str, path: str, status: int, media: str, value: Any) -> None:
        OAS31Validator(self._schema(method, path, status, media)).validate(value)
        self.seen.add((method, path, status))

    def call(self, method: str, path: str, *, expect: int = 200, **kwargs: Any) -> Any:
        """``path`` is the documented template; ``kwargs["params"]`` fill it in."""
        fill = kwargs.pop("path_params", {})
        with self.client.stream(method, path.format(**fill), **kwargs) as response:
            response.read()
        assert response.status_code == expect, response.text
        media = response.headers["content-type"].split(";")[0]
        if media == "application/x-ndjson":
            lines = [json.loads(line) for line in response.text.splitlines() if line]
            for line in lines:
                self.validate(method, path, expect, media, line)
            return lines
        value = response.json() if media == "application/json" else response.text
        self.validate(method, path, expect, media, value)
        return value


@pytest.fixture
def served(learned_home, embedder, monkeypatch) -> Iterator[tuple[Running, Session]]:
    """The real server on loopback, and the session it serves."""
    # auto, with Ollama's address a closed port (conftest): turns answer offline, and the
    # model list fails with its documented 502 (offline by choice would list no models).
    # The memory has derived beliefs, for the learning loop's routes.
    monkeypatch.setenv("SADIE_REASONER", "auto")
    session = Session(Memory.open(learned_home, embedder=embedder), load_settings())
    try:
        with running(session) as api:
            yield api, session
    finally:
        session.close()


@pytest.fixture
def api(served: tuple[Running, Session]) -> Running:
    return served[0]


def test_every_route_answers_as_documented(served: tuple[Running, Session]) -> None:
    api, session = served
    c = Checker(api)
    C = "/v1/conversations/{conversation_id}"

    events = c.call("POST", "/api/chat", json={"message": "How did the marathon go?"})
    assert events[0]["type"] == "meta" and events[-1]["type"] == "done"
    cid = events[0]["conversation_id"]
    running = c.call(
        "POST", "/api/chat", expect=202, json={"message": "And my knee?", "auto_continue": True}
    )
    c.call(
        "GET",
        "/api/chat/{conversation_id}/stream",
        path_params={"conversation_id": running["conversation_id"]},
    )
    with c.client.stream("POST", "/v1/chat", json={"message": "hello"}) as sse:
        assert sse.status_code == 200 and sse.headers["content-type"].startswith(
            "text/event-stream"
        )
        sse.read()
    c.seen.add(("POST", "/v1/chat", 200))

    answer = c.call("POST", "/v1/ask", json={"question": "When did I finish the marathon?"})
    assert answer["citations"]
    ids = {"conversation_id": cid}
    c.call("GET", "/v1/conversations")
    c.call("GET", C, path_params=ids)
    for verb in ("pin", "unpin", "archive", "unarchive"):
        c.call("POST", f"{C}/{verb}", path_params=ids)
    c.call("POST", f"{C}/rename", path_params=ids, json={"title": "Marathon"})

    found = c.call("GET", "/v1/chips/find", params={"query": "Ines", "kind": "wiki"})
    chip = c.call(
        "POST", f"{C}/chips", expect=201, path_params=ids,
        json={"kind": "wiki", "ref": found[0]["ref_id"]},
    )  # fmt: skip
    c.call("GET", f"{C}/chips", path_params=ids)
    c.call("DELETE", f"{C}/chips/{{chip_id}}", path_params={**ids, "chip_id": chip["id"]})

    c.call("GET", f"{C}/export", path_params=ids)
    exported = c.call("GET", f"{C}/export", path_params=ids, params={"format": "json"})
    c.call("POST", "/v1/conversations/import", expect=201, json=exported)

    searched = c.call("GET", "/v1/search", params={"query": "marathon", "k": 3})
    episode = {"episode_id": searched["chunks"][0]["episode_id"]}
    c.call("GET", "/v1/episodes/{episode_id}", path_params=episode)
    c.call("GET", "/v1/soul")
    c.call("PUT", "/v1/soul", json={"text": "Maya, 35, runs and writes."})
    assert c.call("GET", "/v1/soul")["text"].startswith("Maya, 35")
    c.call("POST", "/v1/soul/suggest", expect=502)  # no model here: the documented error
    derived = c.call("GET", "/v1/beliefs", params={"origin": "derived"})
    assert len(derived) == 3 and {b["status"] for b in derived} == {"active"}
    B = "/v1/beliefs/{belief_id}"
    first, second, third = ({"belief_id": b["id"][:8]} for b in derived)
    shown = c.call("GET", B, path_params=first)
    assert shown["belief"]["id"] == derived[0]["id"] and shown["evidence"][0]["verbatim"]
    accepted = c.call("POST", f"{B}/accept", path_params=first, json={"reason": "true"})
    assert accepted["belief"]["status"] == "accepted"
    c.call("POST", f"{B}/reject", path_params=second, json={})
    edited = c.call("POST", f"{B}/edit", path_params=third, json={"statement": "I run far"})
    assert edited["belief"]["statement"] == "I run far"
    c.call("GET", "/v1/personas")
    c.call("GET", "/v1/stats")
    c.call("GET", "/v1/models", expect=502)  # no Ollama here: the documented error
    c.call("GET", "/v1/health")
    c.call("GET", "/openapi.json")
    c.call("DELETE", C, path_params=ids)

    # The jobs read files on the holder's machine: refused over TCP, answered on its socket.
    notes = Path(session.home).parent / "more-notes"
    notes.mkdir()
    (notes / "2026-04-01.md").write_text("Walked around Porto with Ines.\n", encoding="utf-8")
    job = {"paths": [str(notes)]}
    note = {"text": "Swam in the river at dawn.", "title": "River swim"}
    for path in ("/v1/ingest", "/v1/notes/remove", "/v1/reflect", "/v1/notes"):
        body = {"/v1/reflect": {}, "/v1/notes": note}.get(path, job)
        c.call("POST", path, expect=403, json=body)
    backup = {"path": str(notes.parent / "memory.backup")}
    c.call("POST", "/v1/backup", expect=403, json=backup)
    holder = hold(session)
    assert holder is not None
    tcp, c.client = (
        c.client,
        httpx.Client(
            transport=httpx.HTTPTransport(uds=str(holder.listener.path)),
            base_url="http://sadie",
            timeout=TIMEOUT,
        ),
    )
    try:
        lines = c.call("POST", "/v1/ingest", json=job)
        assert lines[-1]["type"] == "report" and lines[-1]["report"]["added"] == 1
        assert c.call("POST", "/v1/notes/remove", json=job) == {"removed": 1}
        added = c.call("POST", "/v1/notes", expect=201, json=note)
        assert added["title"] == "River swim" and Path(added["path"]).is_file()
        assert c.call("POST", "/v1/reflect", json={})[-1]["type"] in ("report", "error")
        assert c.call("POST", "/v1/backup", json=backup)["counts"]["episodes"] > 0
    finally:
        c.client.close()
        c.client = tcp
        holder.stop()

    # Failures answer the documented Error shape too.
    c.call("GET", C, expect=404, path_params=ids)
    c.call("POST", "/v1/ask", expect=400, json={"question": 3})
    c.call("POST", f"{C}/rename", expect=400, path_params=ids, json={"title": " "})
    c.call("GET", "/v1/beliefs", expect=400, params={"status": "believed"})
    c.call("GET", B, expect=404, path_params={"belief_id": "ffffffff"})

    answered = {(method, path) for method, path, _ in c.seen}
    assert answered == {(r.method, r.path) for r in ROUTES}


def test_an_answer_with_a_field_its_shape_lacks_fails(api: Running) -> None:
    # A guard on the checks above: the closed schemas refuse a field nobody declared.
    c = Checker(api)
    soul = c.call("GET", "/v1/soul")
    with pytest.raises(Exception, match="extra"):
        c.validate("GET", "/v1/soul", 200, "application/json", {**soul, "extra": 1})
