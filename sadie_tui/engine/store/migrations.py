"""The schema, as ordered, named migrations recorded in ``schema_migrations``.

Add a migration by appending a function to ``MIGRATIONS``; never edit one that has shipped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from .schema import CREATE_VECTOR_INDEX, VECTOR_TYPE


class Database(Protocol):
    """What a migration needs of ``store.db.Database`` (no import of it: no cycle)."""

    def execute(self, sql: str, params: Sequence[object] | None = None) -> object: ...

    def fetchall(
        self, sql: str, params: Sequence[object] | None = None
    ) -> list[tuple[Any, ...]]: ...  # Any: DuckDB's rows (see store.db.Row)

    def transaction(self) -> AbstractContextManager[None]: ...

    @property
    def encrypted(self) -> bool: ...


def m001_memory(db: Database) -> None:
    db.execute(
        """
        CREATE TABLE episodes (
            id UUID PRIMARY KEY,
            kind VARCHAR NOT NULL,
            title VARCHAR NOT NULL,
            source VARCHAR NOT NULL,
            source_key VARCHAR NOT NULL UNIQUE,
            occurred_at TIMESTAMP NOT NULL,
            ingested_at TIMESTAMP NOT NULL DEFAULT current_localtimestamp(),
            salience DOUBLE NOT NULL DEFAULT 0.5,
            content_hash VARCHAR NOT NULL,
            tags VARCHAR[] NOT NULL DEFAULT [],
            text VARCHAR NOT NULL
        )"""
    )
    db.execute("CREATE SEQUENCE chunk_ids START 1")
    db.execute(
        f"""
        CREATE TABLE chunks (
            id BIGINT PRIMARY KEY DEFAULT nextval('chunk_ids'),
            episode_id UUID NOT NULL,
            ordinal INTEGER NOT NULL,
            text VARCHAR NOT NULL,
            embedding {VECTOR_TYPE} NOT NULL
        )"""
    )
    db.execute("CREATE INDEX chunks_episode ON chunks(episode_id)")
    db.execute(
        """
        CREATE TABLE entities (
            id INTEGER PRIMARY KEY,
            name VARCHAR NOT NULL,
            key VARCHAR NOT NULL UNIQUE,
            kind VARCHAR NOT NULL
        )"""
    )
    db.execute(
        """
        CREATE TABLE entity_mentions (
            entity_id INTEGER NOT NULL,
            chunk_id BIGINT NOT NULL,
            episode_id UUID NOT NULL,
            count INTEGER NOT NULL DEFAULT 1
        )"""
    )
    db.execute("CREATE INDEX mentions_entity ON entity_mentions(entity_id)")
    db.execute("CREATE INDEX mentions_chunk ON entity_mentions(chunk_id)")
    db.execute(
        """
        CREATE TABLE entity_edges (
            src INTEGER NOT NULL,
            dst INTEGER NOT NULL,
            weight DOUBLE NOT NULL,
            PRIMARY KEY (src, dst)
        )"""
    )


def m002_derived(db: Database) -> None:
    db.execute(
        f"""
        CREATE TABLE beliefs (
            id UUID PRIMARY KEY,
            statement VARCHAR NOT NULL,
            status VARCHAR NOT NULL,
            confidence DOUBLE NOT NULL,
            evidence UUID[] NOT NULL DEFAULT [],
            source_key VARCHAR NOT NULL,
            embedding {VECTOR_TYPE}
        )"""
    )
    db.execute(
        f"""
        CREATE TABLE observations (
            id UUID PRIMARY KEY,
            source VARCHAR NOT NULL,
            observed_at TIMESTAMP NOT NULL,
            text VARCHAR NOT NULL,
            source_key VARCHAR NOT NULL,
            embedding {VECTOR_TYPE}
        )"""
    )
    for table, extra_sql in (
        ("wiki_entries", "kind VARCHAR NOT NULL DEFAULT 'note',"),
        ("briefs", "occurred_at TIMESTAMP,"),
        ("today_cards", "occurred_at TIMESTAMP,"),
    ):
        db.execute(
            f"""
            CREATE TABLE {table} (
                id UUID PRIMARY KEY,
                title VARCHAR NOT NULL,
                {extra_sql}
                text VARCHAR NOT NULL,
                source_key VARCHAR NOT NULL UNIQUE
            )"""
        )
    db.execute(
        """
        CREATE TABLE soul (
            id INTEGER PRIMARY KEY,
            text VARCHAR NOT NULL,
            updated_at TIMESTAMP NOT NULL DEFAULT current_localtimestamp()
        )"""
    )


def m003_conversations(db: Database) -> None:
    db.execute(
        """
        CREATE TABLE conversations (
            id UUID PRIMARY KEY,
            title VARCHAR NOT NULL,
            summary VARCHAR NOT NULL DEFAULT '',
            emotion VARCHAR,
            persona VARCHAR,
            pinned BOOLEAN NOT NULL DEFAULT false,
            archived_at TIMESTAMP,
            created_at TIMESTAMP NOT NULL DEFAULT current_localtimestamp(),
            updated_at TIMESTAMP NOT NULL DEFAULT current_localtimestamp()
        )"""
    )
    db.execute(
        """
        CREATE TABLE messages (
            id UUID PRIMARY KEY,
            conversation_id UUID NOT NULL,
            role VARCHAR NOT NULL,
            content VARCHAR NOT NULL,
            status VARCHAR NOT NULL,
            emotion VARCHAR,
            citations JSON,
            model VARCHAR,
            latency_ms DOUBLE,
            metadata JSON,
            created_at TIMESTAMP NOT NULL DEFAULT current_localtimestamp()
        )"""
    )
    db.execute("CREATE INDEX messages_conversation ON messages(conversation_id)")
    db.execute(
        """
        CREATE TABLE chips (
            id UUID PRIMARY KEY,
            conversation_id UUID NOT NULL,
            kind VARCHAR NOT NULL,
            ref_id VARCHAR NOT NULL,
            label VARCHAR NOT NULL,
            snippet VARCHAR,
            created_at TIMESTAMP NOT NULL DEFAULT current_localtimestamp()
        )"""
    )
    db.execute(
        """
        CREATE TABLE policy_events (
            id UUID PRIMARY KEY,
            conversation_id UUID,
            message_id UUID,
            policy VARCHAR NOT NULL,
            action VARCHAR NOT NULL,
            match VARCHAR,
            created_at TIMESTAMP NOT NULL DEFAULT current_localtimestamp()
        )"""
    )


def m004_telemetry(db: Database) -> None:
    db.execute(
        """
        CREATE TABLE turns (
            id UUID PRIMARY KEY,
            kind VARCHAR NOT NULL,
            query VARCHAR NOT NULL,
            model VARCHAR,
            persona VARCHAR,
            prompt_version VARCHAR,
            grounding DOUBLE,
            abstained BOOLEAN,
            latency_ms DOUBLE,
            conversation_id UUID,
            message_id UUID,
            created_at TIMESTAMP NOT NULL DEFAULT current_localtimestamp()
        )"""
    )
    db.execute(
        """
        CREATE TABLE retrievals (
            turn_id UUID NOT NULL,
            chunk_id BIGINT NOT NULL,
            episode_id UUID NOT NULL,
            rank INTEGER NOT NULL,
            vector_score DOUBLE,
            keyword_score DOUBLE,
            graph_score DOUBLE,
            fused_score DOUBLE,
            final_score DOUBLE,
            cited BOOLEAN NOT NULL DEFAULT false
        )"""
    )


def m005_vector_index(db: Database) -> None:
    # vss cannot keep an HNSW index in an encrypted file (DuckDB 1.5.5): there the vector
    # channel is an exact scan (``store.db.Database.copy_to``).
    if not db.encrypted:
        db.execute(CREATE_VECTOR_INDEX)


def m006_turn_grounding(db: Database) -> None:
    """How each turn's grounding went: the model's own tail, the citation pass, the details
    found in no source, and a reply cut short."""
    for column_sql in (
        "tail VARCHAR",
        "repaired BOOLEAN",
        "citation_pass VARCHAR",
        "unsupported INTEGER",
        "cut VARCHAR",
    ):
        db.execute(f"ALTER TABLE turns ADD COLUMN {column_sql}")


def m007_vault_pages(db: Database) -> None:
    """Vault notes as pages: each episode's page key (its file stem, case-folded: what
    ``[[links]]`` find it by) and metadata (links, embeds, aliases, page kind); the links
    between notes; and the aliases a person's page gives its entity. Episodes already stored
    get their page key from their file name."""
    db.execute("ALTER TABLE episodes ADD COLUMN page VARCHAR")
    db.execute("ALTER TABLE episodes ADD COLUMN metadata JSON")
    db.execute(
        "UPDATE episodes SET page = nullif(trim(regexp_replace(lower(regexp_extract(source,"
        " '(?i)([^/\\\\]+)\\.(md|markdown|txt|text)$', 1)), '\\s+', ' ', 'g')), '')"
        " WHERE source NOT LIKE '%.jsonl#%'"
    )
    db.execute(
        """
        CREATE TABLE note_links (
            episode_id UUID NOT NULL,
            target VARCHAR NOT NULL
        )"""
    )
    db.execute(
        """
        CREATE TABLE entity_aliases (
            key VARCHAR NOT NULL,
            entity_id INTEGER NOT NULL,
            episode_id UUID NOT NULL
        )"""
    )


def m008_learning(db: Database) -> None:
    """The learning loop (issue 25): where a belief came from (``stated`` in beliefs.jsonl or
    ``derived`` by ``sadie reflect``), its kind and times; each derived belief's checked
    evidence, its links to other beliefs and records, the log of every change to it (which
    run, which model, when, why), its former wordings (an edited or merged belief still
    recognises them), the reflection runs, and which episodes have been reflected on.

    No column gets a function default (see ``store.db._engine``): rows carry their times."""
    for column_sql in (
        "origin VARCHAR DEFAULT 'stated'",
        "kind VARCHAR",
        "fingerprint VARCHAR",
        "created_at TIMESTAMP",
        "updated_at TIMESTAMP",
    ):
        db.execute(f"ALTER TABLE beliefs ADD COLUMN {column_sql}")
    db.execute(
        """
        CREATE TABLE belief_evidence (
            belief_id UUID NOT NULL,
            episode_id UUID NOT NULL,
            quote VARCHAR NOT NULL,
            verbatim BOOLEAN NOT NULL,
            stance VARCHAR NOT NULL,
            run_id UUID,
            added_at TIMESTAMP NOT NULL
        )"""
    )
    db.execute("CREATE INDEX belief_evidence_belief ON belief_evidence(belief_id)")
    db.execute(
        """
        CREATE TABLE belief_links (
            belief_id UUID NOT NULL,
            kind VARCHAR NOT NULL,
            target_id VARCHAR NOT NULL,
            target_kind VARCHAR NOT NULL,
            quote VARCHAR,
            run_id UUID,
            created_at TIMESTAMP NOT NULL
        )"""
    )
    db.execute(
        f"""
        CREATE TABLE belief_aliases (
            belief_id UUID NOT NULL,
            statement VARCHAR NOT NULL,
            fingerprint VARCHAR NOT NULL,
            embedding {VECTOR_TYPE}
        )"""
    )
    db.execute(
        """
        CREATE TABLE belief_changes (
            id UUID PRIMARY KEY,
            belief_id UUID NOT NULL,
            run_id UUID,
            model VARCHAR,
            action VARCHAR NOT NULL,
            reason VARCHAR,
            before VARCHAR,
            after VARCHAR,
            changed_at TIMESTAMP NOT NULL
        )"""
    )
    db.execute("CREATE INDEX belief_changes_belief ON belief_changes(belief_id)")
    db.execute(
        """
        CREATE TABLE reflection_runs (
            id UUID PRIMARY KEY,
            model VARCHAR,
            started_at TIMESTAMP NOT NULL,
            finished_at TIMESTAMP,
            status VARCHAR NOT NULL,
            counts JSON
        )"""
    )
    db.execute(
        """
        CREATE TABLE episode_reflection (
            episode_id UUID PRIMARY KEY,
            reflected_at TIMESTAMP,
            run_id UUID
        )"""
    )


def m009_chip_origin(db: Database) -> None:
    """Who attached a chip: ``you``, or ``sadie`` (a wiki page about someone a "who is"
    message names: shown as a chip marked so, removable like any other)."""
    db.execute("ALTER TABLE chips ADD COLUMN added_by VARCHAR DEFAULT 'you'")


def m010_observation_measures(db: Database) -> None:
    """The figure an observation states, as fields (``ingest.measures``): the measure
    (``sleep``, ``phone_night``, ``runs``, ``takeaway``), its value in that measure's unit and
    the inclusive dates it covers. Rows stored before stay as they were (NULL): the figures
    step reads their text with the same patterns (``reflect.figures``)."""
    for column_sql in (
        "measure VARCHAR",
        "value DOUBLE",
        "unit VARCHAR",
        "period_start DATE",
        "period_end DATE",
    ):
        db.execute(f"ALTER TABLE observations ADD COLUMN {column_sql}")


MIGRATIONS: list[tuple[str, Callable[[Database], None]]] = [
    ("001_memory", m001_memory),
    ("002_derived", m002_derived),
    ("003_conversations", m003_conversations),
    ("004_telemetry", m004_telemetry),
    ("005_vector_index", m005_vector_index),
    ("006_turn_grounding", m006_turn_grounding),
    ("007_vault_pages", m007_vault_pages),
    ("008_learning", m008_learning),
    ("009_chip_origin", m009_chip_origin),
    ("010_observation_measures", m010_observation_measures),
]


def applied(db: Database) -> list[str]:
    db.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " name VARCHAR PRIMARY KEY, applied_at TIMESTAMP DEFAULT current_localtimestamp())"
    )
    return [r[0] for r in db.fetchall("SELECT name FROM schema_migrations ORDER BY name")]


def pending(db: Database) -> list[str]:
    """The migrations not yet recorded, read without writing (doctor opens read-only): a new
    memory or an upgrade cut short has some; the next open for writing applies them."""
    recorded = db.fetchall(
        "SELECT 1 FROM duckdb_tables()"
        " WHERE database_name = current_database() AND table_name = 'schema_migrations'"
    )
    done = {r[0] for r in db.fetchall("SELECT name FROM schema_migrations")} if recorded else set()
    return [name for name, _ in MIGRATIONS if name not in done]


def migrate(db: Database) -> list[str]:
    """Apply every migration not yet recorded, each in its own transaction. Returns their names."""
    done = set(applied(db))
    ran: list[str] = []
    for name, fn in MIGRATIONS:
        if name in done:
            continue
        with db.transaction():
            fn(db)
            db.execute("INSERT INTO schema_migrations (name) VALUES (?)", [name])
        ran.append(name)
    return ran
