"""What a memory must look like after any crash (``crash`` kills, this checks).

Each problem is one line starting with what kind it is: ``does not open``, ``doctor`` (a ✗
line), ``lost`` (something the process reported done, or that an earlier session committed,
is not there), ``trace`` (an uncommitted or half-done write left behind), ``index`` (the
keyword index disagrees with the database), ``heal`` (running the killed ingest again does
not finish its work).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sadie_tui.engine.errors import SadieError

if TYPE_CHECKING:
    from tests.support.crash import Case, Workspace
    from tests.support.crash_runs import Reported


def check(ws: Workspace, case: Case, home: Path, reported: Reported) -> list[str]:
    from sadie_tui.engine.memory import Memory

    if not (home / "sadie.duckdb").exists():
        return ["does not open: the memory file is gone"]
    problems = at_rest(home, reported)
    problems += doctor(home)
    try:
        memory = Memory.open(home, embedder=ws.embedder)
    except SadieError as exc:
        return [*problems, f"does not open: {exc.one_line()}"]
    with memory:
        db = memory.db
        problems += schema(db)
        problems += messages(db, ws, case, reported)
        problems += episodes(db, ws, case, reported)
        problems += derived(db, reported)
        problems += keyword_index(memory)
        problems += vector_index(db)
        if case.scenario == "ingest":
            problems += heal(memory, ws)
        if case.scenario == "encrypt":
            problems += switched(home, memory, reported)
    if case.scenario == "backup":
        problems += backed_up(home, reported)
    return problems


def at_rest(home: Path, reported: Reported) -> list[str]:
    """An encrypted memory (a key card beside it) opens with the case's passphrase: the key is
    unlocked here as `SADIE_PASSPHRASE` would unlock it."""
    from sadie_tui.engine.store import keycard
    from tests.support.crash_runs import PASSPHRASE

    card = keycard.read_card(home)
    if card is None:
        return ["lost: `sadie encrypt` said it was done but the memory is plain"] * (
            reported.encrypted
        )
    keycard.remember(home, card.derive(PASSPHRASE))
    return []


def switched(home: Path, memory: Any, reported: Reported) -> list[str]:
    """After a killed `sadie encrypt` is reopened: one memory, whole, nothing staged left, and
    no plain keyword index beside an encrypted memory."""
    from sadie_tui.engine.store import switch

    problems = []
    for leftover in (switch.MARKER, switch.STAGED_DB, switch.STAGED_CARD):
        if (home / leftover).exists():
            problems.append(f"trace: {leftover} is left after reopening")
    if memory.db.encrypted and (home / "bm25").exists():
        problems.append("trace: a plain keyword index beside the encrypted memory")
    return problems


def backed_up(home: Path, reported: Reported) -> list[str]:
    """A backup file is whole (it restores into a new home, with its manifest's rows) or not
    there; one `sadie backup` said it wrote must be there."""
    from sadie_tui.engine.errors import SadieError
    from sadie_tui.engine.privacy.backup import restore
    from sadie_tui.engine.store.copies import table_counts
    from sadie_tui.engine.store.db import Database
    from tests.support.crash_runs import backup_file

    target = backup_file(home)
    if not target.exists():
        return ["lost: `sadie backup` said it was done but there is no file"] * reported.backed_up
    fresh = home.parent / "restored"
    try:
        manifest = restore(fresh, target)
        with Database.open(fresh / "sadie.duckdb") as db:
            counts = table_counts(db)
    except SadieError as exc:
        return [f"lost: the backup does not restore: {exc.one_line()}"]
    if {k: counts.get(k) for k in manifest.counts} != manifest.counts:
        return ["lost: the restored backup does not hold its manifest's rows"]
    return []


def doctor(home: Path) -> list[str]:
    """`sadie doctor`'s lines about the home and the database, straight after the crash."""
    from sadie_tui.engine.doctor import check_database, check_home

    checks = [check_home(home), *check_database(home)]
    return [f"doctor: ✗ {c.name}: {c.detail} ({c.fix})" for c in checks if c.status == "fail"]


def schema(db: Any) -> list[str]:
    from sadie_tui.engine.store.migrations import pending

    missing = pending(db)
    return [f"trace: schema steps not applied after reopening: {missing}"] if missing else []


def messages(db: Any, ws: Workspace, case: Case, reported: Reported) -> list[str]:
    rows = db.fetchall("SELECT id::VARCHAR, conversation_id::VARCHAR, role, status FROM messages")
    found = {r[0]: r for r in rows}
    conversations = {r[0] for r in db.fetchall("SELECT id::VARCHAR FROM conversations")}
    pinned = {r[0] for r in db.fetchall("SELECT id::VARCHAR FROM conversations WHERE pinned")}
    problems = [f"trace: message {r[0]} is still streaming" for r in rows if r[3] == "streaming"]
    problems += [
        f"trace: message {r[0]} has no conversation" for r in rows if r[1] not in conversations
    ]
    if case.memory != "new":
        gone = ws.base_messages - set(found)
        problems += [f"lost: message {m} of the existing conversation" for m in sorted(gone)]
    problems += [f"lost: conversation {c}" for c in sorted(reported.conversations - conversations)]
    problems += [f"lost: the pin of conversation {c}" for c in sorted(reported.pinned - pinned)]
    for reply in sorted(reported.shown | reported.done):
        row = found.get(reply)
        user = found.get(reported.users.get(reply, ""))
        if row is None:
            problems.append(f"lost: reply {reply} (its tokens were shown)")
        elif reply in reported.done and row[3] not in ("complete", "blocked"):
            problems.append(f"lost: reply {reply} was done but is {row[3]}")
        if user is None or user[3] != "complete":
            problems.append(f"lost: the person's message before reply {reply}")
    return problems


def episodes(db: Any, ws: Workspace, case: Case, reported: Reported) -> list[str]:
    """Every episode whole (its chunks, in order), of a version that was ingested; version 2
    whole when ingest said it was done; the ones version 2 leaves alone never lost."""
    from sadie_tui.engine.ingest.chunker import chunk_text

    rows = db.fetchall("SELECT source_key, content_hash, id::VARCHAR, text FROM episodes")
    problems = [
        f"trace: episode {k} twice" for k, n in Counter(r[0] for r in rows).items() if n > 1
    ]
    stored = {r[0]: r[1] for r in rows}
    known = {k: {ws.first.get(k), ws.second.get(k)} for k in ws.second}
    if case.memory == "new":
        known = {k: {h} for k, h in ws.second.items()}
    for key, digest in stored.items():
        if digest not in known.get(key, set()):
            problems.append(f"trace: episode {key} is of no version that was ingested")
    if case.memory != "new":
        kept = [k for k, h in ws.first.items() if ws.second.get(k) == h]
        problems += [
            f"lost: episode {k} (unchanged since the last session)" for k in kept if k not in stored
        ]
    if reported.ingest_done:
        for key, digest in ws.second.items():
            if stored.get(key) != digest:
                problems.append(f"lost: episode {key} (ingest reported done)")
    chunks = {
        r[0]: (r[1], r[2], r[3])
        for r in db.fetchall(
            "SELECT episode_id::VARCHAR, count(*), count(DISTINCT ordinal), max(ordinal)"
            " FROM chunks GROUP BY 1"
        )
    }
    for key, _digest, episode, text in rows:
        want = len(chunk_text(text))
        if chunks.pop(episode, (0, 0, -1)) != (want, want, want - 1):
            problems.append(f"trace: episode {key} does not have its {want} chunks in order")
    problems += [f"trace: chunks of no episode ({episode})" for episode in chunks]
    orphans = db.fetchone(
        "SELECT count(*) FROM entity_mentions m LEFT JOIN chunks c ON c.id = m.chunk_id"
        " WHERE c.id IS NULL"
    )
    if orphans and orphans[0]:
        problems.append(f"trace: {orphans[0]} entity mentions of chunks that are gone")
    return problems


def derived(db: Any, reported: Reported) -> list[str]:
    """Beliefs and the soul summary: each once; version 2 when ingest said it was done."""
    from tests.support.crash_notes import soul_text

    rows = db.fetchall("SELECT source_key, confidence FROM beliefs")
    problems = [f"trace: belief {k} twice" for k, n in Counter(r[0] for r in rows).items() if n > 1]
    souls = [r[0] for r in db.fetchall("SELECT text FROM soul")]
    if len(souls) > 1:
        problems.append(f"trace: {len(souls)} soul summaries")
    if reported.ingest_done:
        if sorted(r[1] for r in rows) != [0.7, 0.8]:
            problems.append(f"lost: the beliefs of version 2 (ingest reported done): {rows}")
        if souls != [soul_text(2)]:
            problems.append("lost: the soul summary of version 2 (ingest reported done)")
    return problems


def vector_index(db: Any) -> list[str]:
    """The HNSW index, as the log's replay left it, holds every chunk and no other (asked for
    more neighbours than there are chunks, from a few of them: on a memory this small, every
    chunk comes back)."""
    from sadie_tui.engine.store.search import chunk_embeddings, nearest_chunks
    from sadie_tui.engine.store.vectors import vector_literal

    ids = [int(r[0]) for r in db.fetchall("SELECT id FROM chunks ORDER BY id")]
    probes = sorted({ids[0], ids[len(ids) // 2], ids[-1]}) if ids else []
    problems = []
    for probe, vector in zip(probes, chunk_embeddings(db, probes), strict=True):
        # Past the chunk count: a replaced chunk's tombstone in the index takes a place too.
        found = {hit.chunk_id for hit in nearest_chunks(db, vector_literal(vector), 2 * len(ids))}
        if found != set(ids):
            problems.append(
                f"index: from chunk {probe}, the vector index finds {len(found - set(ids))}"
                f" chunks that are gone and misses {len(set(ids) - found)}"
            )
    return problems


def keyword_index(memory: Any) -> list[str]:
    """The saved index is either seen to be stale, or holds exactly the database's chunks; and
    the index a search uses after the crash holds them, each with its own episode."""
    from sadie_tui.engine.retrieval.keyword import forget_cached
    from sadie_tui.engine.retrieval.keyword import keyword_index as current
    from sadie_tui.engine.retrieval.keyword.manifest import DamagedIndex
    from sadie_tui.engine.retrieval.keyword.persist import index_dir, load
    from sadie_tui.engine.store.search import chunk_signature

    db = memory.db
    chunks = dict(db.fetchall("SELECT id, episode_id::VARCHAR FROM chunks"))
    problems = []
    try:
        saved = load(index_dir(memory.home))
    except DamagedIndex as exc:
        saved = None
        problems.append(f"index: the saved keyword index is damaged ({exc})")
    if saved is not None and saved.signature == chunk_signature(db):
        if sorted(saved.chunk_ids.tolist()) != sorted(chunks):
            problems.append("index: the saved keyword index looks current but has other chunks")
    forget_cached(memory.home)
    index = current(memory)
    catalogue = index.catalogue
    indexed = {
        int(chunk): catalogue.episode_ids[int(code)]
        for chunk, code in zip(catalogue.chunk_ids, catalogue.episode, strict=True)
    }
    if indexed != chunks:
        problems.append(
            f"index: the keyword index holds {len(indexed)} chunks, the database {len(chunks)}"
        )
    return problems


def heal(memory: Any, ws: Workspace) -> list[str]:
    """Running the killed ingest again finishes it: version 2 whole, each episode once."""
    try:
        memory.ingest([ws.notes])
    except SadieError as exc:
        return [f"heal: the ingest run again fails: {exc.one_line()}"]
    stored = dict(memory.db.fetchall("SELECT source_key, content_hash FROM episodes"))
    wrong = [k for k, h in ws.second.items() if stored.get(k) != h]
    problems = [f"heal: episode {k} is not version 2 after ingesting again" for k in wrong]
    return problems + keyword_index(memory) + vector_index(memory.db)
