"""The table of the door's operations: each one declared once (``door``), over the engine
function that does the work.

A face asks ``session.call(Rename(conversation_id, "Holiday plans"))``; the HTTP server serves
every operation here at its path (``serve.operation_routes``), a second sadie sends it to the
holder (``RemoteSession.call``), and those marked with a ``Tool`` are MCP tools. What is not
a request and an answer (a streamed turn, the model's health, a job with progress) stays a
method of ``SessionProtocol``.

Adding an operation: the engine function, one declaration here, and the face that uses it
(the README's recipe).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field

from .door import Op, Tool, operation
from .episodes import Episode, NoteAdded
from .jsonvalue import JSON, JSONObject
from .wire import Text, dump, dump_each

if TYPE_CHECKING:
    from .chips import Candidate, Chip
    from .conversations import Conversation, ConversationShow
    from .privacy.backup import BackupReport
    from .reflect.beliefs import Belief, BeliefDetail
    from .reflect.soul import SoulSuggestion
    from .retrieval.report import Search
    from .session import Session
    from .stats import Stats

MAX_EXPORT_BYTES = 10 * 1024 * 1024  # an import's body: conversations.export_format's limit


def answer_types() -> dict[str, object]:
    """The answers' shapes (``door``: written in quotes below), imported when an operation is
    first served or sent: they bring the store and retrieval, which a face importing the
    table (the app, at start) should not wait for."""
    # lazy: (above)
    from .chips import Candidate, Chip
    from .conversations import Conversation, ConversationShow
    from .privacy.backup import BackupReport
    from .reflect.beliefs import Belief, BeliefDetail
    from .reflect.soul import SoulSuggestion
    from .retrieval.report import Search
    from .stats import Stats

    return {
        "BackupReport": BackupReport,
        "Candidate": Candidate,
        "Chip": Chip,
        "Conversation": Conversation,
        "ConversationShow": ConversationShow,
        "Belief": Belief,
        "BeliefDetail": BeliefDetail,
        "SoulSuggestion": SoulSuggestion,
        "Search": Search,
        "Stats": Stats,
    }


_C = "/v1/conversations/{conversation_id}"
_B = "/v1/beliefs/{belief_id}"
Limit = Annotated[int, Field(ge=1, le=10_000)]


@dataclass(frozen=True)
class AskRequest:
    """One question, optionally for one persona: ``POST /v1/ask`` and the MCP ``ask_memory``
    tool (an answer is a turn, ``SessionProtocol.ask``, not an operation of this table)."""

    question: Text
    persona: str | None = None


# -- conversations -------------------------------------------------------------------------
def _listed(found: list[Conversation]) -> JSONObject:
    return {"conversations": dump_each(found)}


@operation(
    "GET",
    "/v1/conversations",
    "Conversations, pinned first, then by last activity",
    tool=Tool(
        "list_conversations",
        "The person's conversations with sadie, pinned first, then recent.",
        present=_listed,
    ),
)
@dataclass(frozen=True)
class ListConversations(Op["list[Conversation]"]):
    """``archived``: only archived ones; ``search``: title, summary or messages contain it."""

    archived: bool = False
    search: str | None = None
    limit: Limit | None = None

    def run(self, session: Session) -> list[Conversation]:
        from . import conversations as conv  # lazy: the store loads when the table is first used

        return conv.list_conversations(
            session.db, archived=self.archived, search=self.search or None, limit=self.limit
        )


@operation("GET", _C, "A conversation with its messages and chips", errors=(404,))
@dataclass(frozen=True)
class ShowConversation(Op["ConversationShow"]):
    conversation_id: str  # its id or a unique prefix (as every conversation_id here)

    def run(self, session: Session) -> ConversationShow:
        # lazy: the store loads when the table is first used
        from . import chips as chips_engine
        from . import conversations as conv

        c = conv.get_conversation(session.db, self.conversation_id)
        return conv.ConversationShow(
            c, conv.messages(session.db, c.id), chips_engine.list_chips(session.db, c.id)
        )


@operation("POST", f"{_C}/pin", "Pin a conversation", errors=(404,))
@dataclass(frozen=True)
class Pin(Op["Conversation"]):
    conversation_id: str

    def run(self, session: Session) -> Conversation:
        from . import conversations as conv  # lazy: the store loads when the table is first used

        return conv.pin(session.db, self.conversation_id, True)


@operation("POST", f"{_C}/unpin", "Unpin a conversation", errors=(404,))
@dataclass(frozen=True)
class Unpin(Op["Conversation"]):
    conversation_id: str

    def run(self, session: Session) -> Conversation:
        from . import conversations as conv  # lazy: the store loads when the table is first used

        return conv.pin(session.db, self.conversation_id, False)


@operation("POST", f"{_C}/archive", "Archive a conversation", errors=(404,))
@dataclass(frozen=True)
class Archive(Op["Conversation"]):
    conversation_id: str

    def run(self, session: Session) -> Conversation:
        from . import conversations as conv  # lazy: the store loads when the table is first used

        return conv.archive(session.db, self.conversation_id, True)


@operation("POST", f"{_C}/unarchive", "Unarchive a conversation", errors=(404,))
@dataclass(frozen=True)
class Unarchive(Op["Conversation"]):
    conversation_id: str

    def run(self, session: Session) -> Conversation:
        from . import conversations as conv  # lazy: the store loads when the table is first used

        return conv.archive(session.db, self.conversation_id, False)


@operation("POST", f"{_C}/rename", "Rename a conversation", errors=(400, 404))
@dataclass(frozen=True)
class Rename(Op["Conversation"]):
    conversation_id: str
    title: Text

    def run(self, session: Session) -> Conversation:
        from . import conversations as conv  # lazy: the store loads when the table is first used

        return conv.rename(session.db, self.conversation_id, self.title)


@operation("DELETE", _C, "Forget a conversation with its messages and chips", errors=(404,))
@dataclass(frozen=True)
class Forget(Op["Conversation"]):
    conversation_id: str

    def run(self, session: Session) -> Conversation:
        from . import conversations as conv  # lazy: the store loads when the table is first used

        return conv.forget(session.db, self.conversation_id)


ExportFormat = Literal["md", "json"]
EXPORT_TYPES = {"md": "text/markdown; charset=utf-8", "json": "application/json"}


@operation(
    "GET",
    f"{_C}/export",
    "A conversation as Markdown or as JSON that can be imported again",
    errors=(400, 404),
    answers=((str, "text/markdown"), (dict[str, object], "application/json")),
)
@dataclass(frozen=True)
class Export(Op[str]):
    """The text ``sadie conversations export`` writes, as the body (Markdown or JSON)."""

    conversation_id: str
    format: ExportFormat = "md"

    def run(self, session: Session) -> str:
        from . import conversations as conv  # lazy: the store loads when the table is first used

        return conv.export(session.db, self.conversation_id, self.format)

    def media(self) -> str:
        return EXPORT_TYPES[self.format]


@operation(
    "POST",
    "/v1/conversations/import",
    "Read a JSON export back in (the body, as the file holds it), as a new conversation",
    status=201,
    errors=(400, 413),
    body="text",
    body_limit=MAX_EXPORT_BYTES,
)
@dataclass(frozen=True)
class ImportConversation(Op["Conversation"]):
    text: str  # the export file's text: a malformed one gets the CLI's own error

    def run(self, session: Session) -> Conversation:
        from . import conversations as conv  # lazy: the store loads when the table is first used

        return conv.import_json(session.db, self.text)


# -- chips ---------------------------------------------------------------------------------
@operation("GET", f"{_C}/chips", "The chips attached to a conversation", errors=(404,))
@dataclass(frozen=True)
class ListChips(Op["list[Chip]"]):
    conversation_id: str

    def run(self, session: Session) -> list[Chip]:
        from . import chips as chips_engine  # lazy: the store loads when the table is first used

        return chips_engine.list_chips(session.db, self.conversation_id)


@operation("POST", f"{_C}/chips", "Attach a chip", status=201, errors=(400, 404))
@dataclass(frozen=True)
class AddChip(Op["Chip"]):
    """``kind``: wiki, source, brief, graph_entity, discourse or record; ``ref``: an id, a
    unique id prefix, an exact title, or an entity's name."""

    conversation_id: str
    kind: Text
    ref: Text
    label: str | None = None

    def run(self, session: Session) -> Chip:
        from . import chips as chips_engine  # lazy: the store loads when the table is first used

        return chips_engine.add_chip(
            session.db, self.conversation_id, self.kind, self.ref, label=self.label
        )


@operation("DELETE", f"{_C}/chips/{{chip_id}}", "Detach a chip", errors=(404,))
@dataclass(frozen=True)
class RemoveChip(Op["Chip"]):
    conversation_id: str
    chip_id: str  # its id or a unique prefix

    def run(self, session: Session) -> Chip:
        from . import chips as chips_engine  # lazy: the store loads when the table is first used

        return chips_engine.remove_chip(session.db, self.conversation_id, self.chip_id)


@operation("GET", "/v1/chips/find", "What can be attached")
@dataclass(frozen=True)
class FindAttachable(Op["list[Candidate]"]):
    query: str = ""
    kind: str | None = None
    limit: Annotated[int, Field(ge=1, le=500)] = 20

    def run(self, session: Session) -> list[Candidate]:
        from . import chips as chips_engine  # lazy: the store loads when the table is first used

        return chips_engine.find_attachable(
            session.db, self.query, kind=self.kind or None, limit=self.limit
        )


# -- the memory ----------------------------------------------------------------------------
def _score(value: JSON) -> float:
    """A chunk's final score to four places (0 when it has none)."""
    return round(float(value), 4) if isinstance(value, (int, float)) else 0.0


def _passages(found: Search) -> JSONObject:
    """A search as other assistants read it: each passage with its episode, date, title,
    text and final score (the channels' scores are sadie's own business)."""
    keep = ("rank", "episode_id", "date", "title", "kind", "text")
    data: JSONObject = dump(found)
    listed = data.get("chunks")
    passages: list[JSON] = [
        {**{key: c.get(key) for key in keep}, "score": _score(c.get("final"))}
        for c in (listed if isinstance(listed, list) else [])
        if isinstance(c, dict)
    ]
    return {
        "query": found.query,
        "persona": found.persona,
        "window": data.get("window"),
        "notices": list(found.notices),
        "chunks": passages,
    }


@operation(
    "GET",
    "/v1/search",
    "The chunks retrieval picks, with every channel's score",
    errors=(400,),
    tool=Tool(
        "search_memory",
        "The passages of the memory that best match a query (hybrid retrieval: vectors, "
        "keywords, the people and places named), each with its episode id, date, title, "
        "text and score.",
        present=_passages,
    ),
)
@dataclass(frozen=True)
class SearchMemory(Op["Search"]):
    """``persona``: whose retrieval (default: the ask persona); ``k``: how many chunks."""

    query: Text
    persona: str | None = None
    k: Annotated[int, Field(ge=1, le=100)] | None = None

    def run(self, session: Session) -> Search:
        from .turns.search import search  # lazy: retrieval loads at the first search

        return search(session.memory, session.settings, self.query, self.persona, self.k)


@operation(
    "GET",
    "/v1/episodes/{episode_id}",
    "One note, as a citation opens it",
    errors=(404,),
    tool=Tool("get_episode", "One episode (a note, journal entry, memo or record) by its id."),
)
@dataclass(frozen=True)
class GetEpisode(Op[Episode]):
    episode_id: Text

    def run(self, session: Session) -> Episode:
        from .episodes import episode  # lazy: as search

        return episode(session.db, self.episode_id.strip())


@operation(
    "POST",
    "/v1/notes",
    "Add a note to the memory (written to its notes folder and read in at once)",
    status=201,
    errors=(400,),
    socket_only=True,
    tool=Tool("add_note", "Add a note to the memory (it is searchable at once).", writes=True),
)
@dataclass(frozen=True)
class AddNote(Op[NoteAdded]):
    text: Text
    title: str | None = None

    def run(self, session: Session) -> NoteAdded:
        from .episodes import add_note  # lazy: as search

        return add_note(session.memory, self.text, self.title)


@dataclass(frozen=True)
class Soul:
    """The memory's summary of who the person is."""

    text: str


@operation("GET", "/v1/soul", "The memory's summary of who the person is")
@dataclass(frozen=True)
class GetSoul(Op[Soul]):
    def run(self, session: Session) -> Soul:
        return Soul(session.memory.soul())


@operation(
    "PUT", "/v1/soul", "Write the soul summary (a draft the person accepted)", errors=(400, 503)
)
@dataclass(frozen=True)
class SaveSoul(Op[Soul]):
    text: Text

    def run(self, session: Session) -> Soul:
        from .reflect.soul import save  # lazy: as search

        save(session.home, self.text)
        return Soul(session.memory.soul())


@operation(
    "POST",
    "/v1/soul/suggest",
    "A drafted update of the soul summary, with its diff; nothing is written",
    errors=(502,),
)
@dataclass(frozen=True)
class SuggestSoul(Op["SoulSuggestion"]):
    """Blocking, with its own event loop: run it from a worker thread."""

    def run(self, session: Session) -> SoulSuggestion:
        import asyncio  # lazy: reflection loads when a draft is asked for

        from .reflect.soul import suggest  # lazy: (as asyncio)

        return asyncio.run(suggest(session.context))


@operation("GET", "/v1/stats", "What the memory holds, as `sadie stats --json`")
@dataclass(frozen=True)
class GetStats(Op["Stats"]):
    def run(self, session: Session) -> Stats:
        return session.memory.stats()


@operation(
    "POST",
    "/v1/backup",
    "Write the whole memory to one file, at a checkpoint, with its manifest",
    errors=(400,),
    socket_only=True,
)
@dataclass(frozen=True)
class Backup(Op["BackupReport"]):
    """The holder writes the file itself, under its database's lock (no statement runs while
    it is copied); ``path`` is absolute, on the machine whose socket this is."""

    path: Text

    def run(self, session: Session) -> BackupReport:
        from .privacy.backup import backup  # lazy: as search

        return backup(session.db, session.home, Path(self.path))


# -- the learning loop ---------------------------------------------------------------------
@operation(
    "GET",
    "/v1/beliefs",
    "Every belief, accepted first, most confident first (as `sadie beliefs list --json`)",
    errors=(400,),
)
@dataclass(frozen=True)
class ListBeliefs(Op["list[Belief]"]):
    status: str | None = None  # only this status (an unknown one: the engine's one line)
    origin: str | None = None  # stated or derived

    def run(self, session: Session) -> list[Belief]:
        from .reflect.views import list_beliefs  # lazy: as search

        return list_beliefs(session.db, status=self.status, origin=self.origin)


@operation(
    "GET",
    _B,
    "One belief with its quotes, links and history (as `sadie beliefs show --json`)",
    errors=(404,),
)
@dataclass(frozen=True)
class ShowBelief(Op["BeliefDetail"]):
    belief_id: str  # its id or a unique prefix (as every belief_id here)

    def run(self, session: Session) -> BeliefDetail:
        from .reflect.views import detail  # lazy: as search

        return detail(session.db, self.belief_id)


@operation(
    "POST",
    f"{_B}/accept",
    "Keep a proposed belief: sadie never retires or contests it afterwards",
    errors=(400, 404),
)
@dataclass(frozen=True)
class AcceptBelief(Op["BeliefDetail"]):
    belief_id: str
    reason: str | None = None  # why, for the belief's history

    def run(self, session: Session) -> BeliefDetail:
        from .reflect.decisions import accept  # lazy: as search

        return accept(session.db, self.belief_id, self.reason)


@operation(
    "POST",
    f"{_B}/reject",
    "Reject a proposed belief: it is never proposed again",
    errors=(400, 404),
)
@dataclass(frozen=True)
class RejectBelief(Op["BeliefDetail"]):
    belief_id: str
    reason: str | None = None

    def run(self, session: Session) -> BeliefDetail:
        from .reflect.decisions import reject  # lazy: as search

        return reject(session.db, self.belief_id, self.reason)


@operation(
    "POST",
    f"{_B}/edit",
    "Reword a proposed belief: its quotes stay, and it counts as accepted",
    errors=(400, 404),
)
@dataclass(frozen=True)
class EditBelief(Op["BeliefDetail"]):
    belief_id: str
    statement: Text

    def run(self, session: Session) -> BeliefDetail:
        from .reflect.decisions import edit  # lazy: as search

        embedder = session.memory.embedder
        return edit(session.db, self.belief_id, self.statement, lambda t: embedder.encode(list(t)))
