"""The schema's shared constants: the embedding width, the vector column type, the HNSW index.

Migrations create the schema from these, compaction rebuilds the index from them, and the
ingest path sizes its vectors by them: the number 384 is written here and nowhere else.
"""

from __future__ import annotations

#: Width of an all-MiniLM-L6-v2 sentence embedding, and of every embedding column.
EMBEDDING_DIM = 384
#: The DuckDB type of an embedding column or parameter cast.
VECTOR_TYPE = f"FLOAT[{EMBEDDING_DIM}]"

VECTOR_INDEX = "chunks_embedding"
#: The HNSW index over chunk embeddings; cosine, which the vector channel's queries rely on.
CREATE_VECTOR_INDEX = (
    f"CREATE INDEX {VECTOR_INDEX} ON chunks USING HNSW (embedding) WITH (metric = 'cosine')"
)
DROP_VECTOR_INDEX = f"DROP INDEX IF EXISTS {VECTOR_INDEX}"

#: Tables counted by ``sadie stats``, in the order they are shown.
STAT_TABLES = (
    "episodes",
    "chunks",
    "entities",
    "entity_edges",
    "beliefs",
    "observations",
    "wiki_entries",
    "briefs",
    "today_cards",
    "conversations",
    "messages",
    "chips",
    "turns",
    "retrievals",
)
#: Derived tables that hold one titled text per source file.
TITLED_TABLES = ("wiki_entries", "briefs", "today_cards")
