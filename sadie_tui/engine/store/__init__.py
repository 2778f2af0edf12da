"""Storage: the one DuckDB file and every SQL statement sadie runs on it.

- ``db``: opening (vss, locks, read-only, migrations) and running statements, DuckDB errors
  translated to ``StorageError``; ``schema``: the shared constants (embedding width, HNSW
  index); ``migrations``: the ordered, named schema changes;
- repositories, one per aggregate, returning frozen records: ``episodes`` (episodes, chunks,
  the entity graph), ``derived`` (beliefs, observations, wiki, briefs, Today cards, soul),
  ``conversations`` (conversations and messages), ``chips``, ``telemetry`` (turns,
  retrievals, policy events), ``stats``, ``search`` (retrieval's reads); ``ids``: new ids,
  the clock, id prefixes.
"""
