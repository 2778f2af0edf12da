"""Vaults as sources: the fixture Obsidian/Logseq vault in tests/data/vault ingested through the
real pipeline (a real DuckDB file, the real embedder): dates, person pages and aliases, links
as mentions and note-to-note edges in the graph channel, tags and embeds kept, and the vault's
own folders, templates, attachments and .sadieignore left out with their reasons."""

from __future__ import annotations

import json
import os
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from sadie_tui.engine.ingest.readers import read_all
from sadie_tui.engine.ingest.vault import rules_for, template_reason
from sadie_tui.engine.memory import Memory
from sadie_tui.engine.personas import get_persona
from sadie_tui.engine.retrieval import graph, keyword, retrieve
from sadie_tui.engine.store.episodes import episode_metadata
from sadie_tui.engine.wire import dump

VAULT = Path(__file__).resolve().parent / "data" / "vault"
HENRIK_MTIME = datetime(2025, 11, 3, 18, 30)


def _copy_vault(root: Path) -> Path:
    vault = root / "vault"
    shutil.copytree(VAULT, vault)
    stamp = HENRIK_MTIME.timestamp()
    os.utime(vault / "People" / "Henrik.md", (stamp, stamp))  # undated: its file time
    return vault


@pytest.fixture(scope="module")
def vault_memory(tmp_path_factory: pytest.TempPathFactory, embedder):  # type: ignore[no-untyped-def]
    """(home, vault, first report): the fixture vault ingested once into a fresh memory."""
    root = tmp_path_factory.mktemp("vault")
    vault = _copy_vault(root)
    home = root / "home"
    with Memory.open(home, embedder=embedder) as memory:
        report = memory.ingest([vault])
    return home, vault, report


@pytest.fixture
def memory(vault_memory, tmp_path: Path, embedder):  # type: ignore[no-untyped-def]
    home = tmp_path / "home"
    shutil.copytree(vault_memory[0], home)
    with Memory.open(home, embedder=embedder) as mem:
        yield mem


def _episodes(memory: Memory) -> dict[str, tuple]:
    rows = memory.db.fetchall(
        "SELECT source, CAST(id AS VARCHAR), occurred_at, title, kind, tags, text, page"
        " FROM episodes"
    )
    return {Path(r[0]).relative_to(_vault_of(r[0])).as_posix(): r[1:] for r in rows}


def _vault_of(source: str) -> Path:
    path = Path(source)
    while path.name != "vault":
        path = path.parent
    return path


# --------------------------------------------------------------------------- ingest


def test_dates_come_from_front_matter_dated_names_and_file_times(memory: Memory) -> None:
    eps = _episodes(memory)
    assert set(eps) == {
        "Daily/2026-04-01.md",
        "People/Ana Ribeiro.md",
        "People/Henrik.md",
        "Lisbon trip.md",
        "journals/2026_03_05.md",
        "pages/Tomás.md",
    }
    assert eps["Daily/2026-04-01.md"][1] == datetime(2026, 4, 1, 9, 0)  # created: …T09:00
    assert eps["journals/2026_03_05.md"][1] == datetime(2026, 3, 5)  # Logseq's dated name
    assert eps["Lisbon trip.md"][1] == datetime(2026, 5, 9)  # date:
    assert eps["People/Henrik.md"][1] == HENRIK_MTIME  # nothing else: the file's time
    assert eps["journals/2026_03_05.md"][2] == "2026-03-05"  # titled by its date
    assert eps["Daily/2026-04-01.md"][3] == "journal"


def test_no_template_becomes_a_memory_and_every_skip_has_its_reason(vault_memory) -> None:
    _home, vault, report = vault_memory
    assert report.skipped == []  # nothing failed: a clean vault ingests cleanly
    reasons = {Path(s.name).relative_to(vault).as_posix(): s.reason for s in report.ignored}
    assert reasons == {
        ".obsidian": "Obsidian's settings folder",
        ".trash": "Obsidian's trash",
        "Templates": "templates folder (named in .obsidian/templates.json)",
        "private": "matched by .sadieignore",
        "Notes/ideas.draft.md": "matched by .sadieignore",
        "Notes/Meeting template.md": (
            "template (placeholders {{title}}, {{date}}, {{attendees}}, little else)"
        ),
        "attachments/run-map.png": "attachment, not a note (.png)",
        "logseq/bak": "Logseq's backups",
        "logseq/config.edn": "attachment, not a note (.edn)",
    }
    assert (report.added, report.updated) == (6, 0)
    listed = dump(report.summary())["ignored"]
    assert {"path": str(vault / "private"), "reason": "matched by .sadieignore"} in listed


def test_persons_from_people_folders_aliases_and_logseq_type(memory: Memory) -> None:
    entities = {
        key: (eid, name, kind)
        for eid, name, key, kind in memory.db.fetchall("SELECT id, name, key, kind FROM entities")
    }
    assert entities["ana ribeiro"][1:] == ("Ana Ribeiro", "person")
    assert entities["henrik"][1:] == ("Henrik", "person")
    assert entities["tomás"][1:] == ("Tomás", "person")
    assert "ana" not in entities and "tom" not in entities  # aliases, not entities of their own
    aliases = dict(memory.db.fetchall("SELECT key, entity_id FROM entity_aliases"))
    assert aliases == {
        "ana": entities["ana ribeiro"][0],
        "a.r.": entities["ana ribeiro"][0],
        "tom": entities["tomás"][0],
    }
    # Not people: the headings, the weekdays, the sentence-initial verb.
    for junk in ("mood", "gratitude", "wednesday", "tuesdays", "thursdays", "ran"):
        assert junk not in entities


def test_links_are_mentions_and_edges(memory: Memory) -> None:
    eps = _episodes(memory)
    ana, henrik = (
        memory.db.fetchone("SELECT id FROM entities WHERE key = ?", [k])[0]
        for k in ("ana ribeiro", "henrik")
    )
    mentions = memory.db.fetchall(
        "SELECT entity_id, CAST(episode_id AS VARCHAR) FROM entity_mentions"
    )
    daily, journal = eps["Daily/2026-04-01.md"][0], eps["journals/2026_03_05.md"][0]
    assert (ana, daily) in mentions and (henrik, daily) in mentions
    assert (henrik, journal) in mentions
    edges = {(s, d) for s, d in memory.db.fetchall("SELECT src, dst FROM entity_edges")}
    assert (ana, henrik) in edges and (henrik, ana) in edges
    links = set(memory.db.fetchall("SELECT CAST(episode_id AS VARCHAR), target FROM note_links"))
    assert (daily, "ana ribeiro") in links and (daily, "lisbon trip") in links
    assert (eps["People/Ana Ribeiro.md"][0], "lisbon trip") in links


def test_tags_and_embeds_are_kept_and_embeds_are_not_text(memory: Memory) -> None:
    eps = _episodes(memory)
    daily_id, _when, _title, _kind, tags, text, page = eps["Daily/2026-04-01.md"]
    assert tags == ["daily", "running"]
    assert "![[" not in text and "run-map" not in text
    assert page == "2026-04-01"
    meta = episode_metadata(memory.db, daily_id)
    assert meta["embeds"] == ["run-map.png"]
    assert meta["links"] == ["Ana Ribeiro", "Henrik", "Lisbon trip"]
    assert eps["journals/2026_03_05.md"][4] == ["long run"]  # Logseq's #[[multi word]]
    tomas = episode_metadata(memory.db, eps["pages/Tomás.md"][0])
    assert tomas["page_kind"] == "person" and tomas["aliases"] == ["Tom"]
    assert "type::" not in eps["pages/Tomás.md"][5]


def test_the_graph_channel_finds_the_linked_notes_for_a_question_naming_ana(
    memory: Memory,
) -> None:
    eps = _episodes(memory)
    g = graph.graph_index(memory.db, str(memory.home), keyword.keyword_index(memory))
    seeds = g.named_in("What did Ana say about the half marathon?")
    assert set(seeds) == {"ana ribeiro"}  # by her alias
    # The note-to-note edges of her page: the note it links to and the note linking to it.
    index = keyword.keyword_index(memory)
    chunk_episode = {
        int(c): str(e)
        for c, e in memory.db.fetchall("SELECT id, CAST(episode_id AS VARCHAR) FROM chunks")
    }
    linked = {
        chunk_episode[int(index.catalogue.chunk_ids[r])] for r in g.linked[seeds["ana ribeiro"]]
    }
    assert linked == {eps["Lisbon trip.md"][0], eps["Daily/2026-04-01.md"][0]}
    result = retrieve(memory, "What did Ana say about the half marathon?", get_persona("analyst"))
    by_graph = {c.episode_id: c.scores["graph"] for c in result.chunks if c.scores["graph"]}
    page, daily, trip = (
        eps[k][0] for k in ("People/Ana Ribeiro.md", "Daily/2026-04-01.md", "Lisbon trip.md")
    )
    # Her page (about her), the note that links to her, and the note her page links to.
    assert {page, daily, trip} <= set(by_graph)
    assert by_graph[trip] < min(by_graph[page], by_graph[daily])  # one link away: a hop
    # Henrik's run: a hop too (he is named beside her), never scored as her own.
    run = eps["journals/2026_03_05.md"][0]
    assert by_graph.get(run, 0.0) < min(by_graph[page], by_graph[daily])


def test_reingesting_the_vault_changes_nothing_and_a_changed_page_moves_its_aliases(
    memory: Memory, vault_memory
) -> None:
    vault = vault_memory[1]
    again = memory.ingest([vault])
    assert (again.added, again.updated, again.unchanged) == (0, 0, 6)
    assert not again.changed
    page = vault / "People" / "Ana Ribeiro.md"
    page.write_text(page.read_text(encoding="utf-8").replace("[Ana, A.R.]", "[Annie]"))
    try:
        changed = memory.ingest([vault])
    finally:
        shutil.copy(VAULT / "People" / "Ana Ribeiro.md", page)
    assert (changed.added, changed.updated) == (0, 1)
    g = graph.graph_index(memory.db, str(memory.home), keyword.keyword_index(memory))
    assert set(g.named_in("annie")) == {"ana ribeiro"}
    assert g.named_in("ana") == {}


# --------------------------------------------------------------------------- rules


def _write(root: Path, rel: str, text: str = "A note.") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("settings", "content", "templates"),
    [
        (".obsidian/templates.json", '{"folder": "Meta/Tpl"}', "Meta/Tpl"),
        (
            ".obsidian/plugins/templater-obsidian/data.json",
            '{"templates_folder": "Meta/Tpl"}',
            "Meta/Tpl",
        ),
        (".obsidian/daily-notes.json", '{"template": "Meta/Tpl/Daily"}', "Meta/Tpl"),
    ],
)
def test_the_templates_folder_named_in_the_settings(
    tmp_path: Path, settings: str, content: str, templates: str
) -> None:
    _write(tmp_path, settings, content)
    _write(tmp_path, f"{templates}/Weekly.md", "A plain-looking template.")
    _write(tmp_path, "Templates/kept.md", "Named folder elsewhere: this one is a note.")
    result = read_all([tmp_path])
    assert [Path(e.source).name for e in result.episodes] == ["kept.md"]
    assert [(Path(s.name).relative_to(tmp_path).as_posix(), s.reason) for s in result.ignored][
        -1
    ] == (templates, f"templates folder (named in {settings})")


def test_a_plain_folder_skips_a_top_level_templates_folder_only(tmp_path: Path) -> None:
    _write(tmp_path, "templates/daily.md", "Plain words.")
    _write(tmp_path, "notes/templates/kept.md", "Not top-level.")
    _write(tmp_path, ".obsidian/templates.json", "{not json")  # unreadable settings: defaults
    result = read_all([tmp_path])
    assert [Path(e.source).name for e in result.episodes] == ["kept.md"]
    assert rules_for(tmp_path).templates == {"templates"}


def test_sadieignore_uses_gitignore_syntax(tmp_path: Path) -> None:
    _write(tmp_path, ".sadieignore", "drafts/\n*.secret.md\n!keep.secret.md\n/top.md\n")
    for rel in ("drafts/a.md", "b.secret.md", "keep.secret.md", "top.md", "sub/top.md", "c.md"):
        _write(tmp_path, rel)
    result = read_all([tmp_path])
    assert sorted(Path(e.source).relative_to(tmp_path).as_posix() for e in result.episodes) == [
        "c.md",
        "keep.secret.md",
        "sub/top.md",
    ]
    assert sorted(Path(s.name).relative_to(tmp_path).as_posix() for s in result.ignored) == [
        "b.secret.md",
        "drafts",
        "top.md",
    ]
    assert result.skipped == []


def test_a_bad_sadieignore_line_is_named_and_the_others_apply(tmp_path: Path) -> None:
    _write(tmp_path, ".sadieignore", "!\nb.md\n")
    _write(tmp_path, "a.md")
    _write(tmp_path, "b.md")
    result = read_all([tmp_path])
    assert [Path(e.source).name for e in result.episodes] == ["a.md"]
    [skip] = result.skipped
    assert skip.name == str(tmp_path / ".sadieignore")
    assert skip.reason.startswith('line 1 "!": bad pattern') and "other lines" in skip.reason


def test_template_looking_notes() -> None:
    assert template_reason("# {{date}}\n\n## Mood\n\n## Gratitude\n") is not None
    assert template_reason("<% tp.date.now() %>\n- [ ] \n") is not None
    assert template_reason("No placeholders here.") is None
    note = "I finally learned that {{date}} in a template becomes today. " * 3
    assert template_reason(note) is None  # a note about templates is a note


def test_outside_a_vault_an_image_is_still_an_unsupported_file(tmp_path: Path) -> None:
    (tmp_path / "p.png").write_bytes(b"\x89PNG")
    result = read_all([tmp_path])
    assert [s.reason for s in result.skipped] == ["unsupported file type (.png)"]
    assert result.ignored == []


def test_the_fixture_vault_reads_as_expected() -> None:
    result = read_all([VAULT])
    by_name = {Path(e.source).name: e for e in result.episodes}
    ana = by_name["Ana Ribeiro.md"]
    assert (ana.page_kind, ana.aliases, ana.tags) == ("person", ["Ana", "A.R."], ["friend"])
    assert by_name["Henrik.md"].page_kind == "person"  # People/ folder
    assert by_name["Lisbon trip.md"].page_kind == ""
    assert json.loads(json.dumps(by_name["2026-04-01.md"].metadata))["embeds"] == ["run-map.png"]


def test_the_vault_migration_gives_stored_notes_their_page_key() -> None:
    """An older memory's notes get a page key from their file name (links to them resolve
    without a re-ingest); records (``file.jsonl#3``) get none."""
    import contextlib

    import duckdb

    from sadie_tui.engine.store import migrations

    con = duckdb.connect()

    class Plain:
        def execute(self, sql: str, params=None):  # type: ignore[no-untyped-def]
            return con.execute(sql, params) if params is not None else con.execute(sql)

        def fetchall(self, sql: str, params=None):  # type: ignore[no-untyped-def]
            return self.execute(sql, params).fetchall()

        def transaction(self):  # type: ignore[no-untyped-def]
            return contextlib.nullcontext()

    db = Plain()
    before = [f for name, f in migrations.MIGRATIONS if name < "007" and name != "005_vector_index"]
    for migration in before:
        migration(db)
    for source in ("/v/People/Ana  Ribeiro.md", "/v/r.jsonl#3", "/v/Notes/TODO.TXT"):
        con.execute(
            "INSERT INTO episodes (id, kind, title, source, source_key, occurred_at,"
            " content_hash, text) VALUES (uuid(), 'note', 't', ?, ?, now(), 'h', 'x')",
            [source, source],
        )
    migrations.m007_vault_pages(db)
    assert dict(con.execute("SELECT source, page FROM episodes").fetchall()) == {
        "/v/People/Ana  Ribeiro.md": "ana ribeiro",
        "/v/r.jsonl#3": None,
        "/v/Notes/TODO.TXT": "todo",
    }


@pytest.mark.parametrize(
    ("rel", "text", "page_kind", "kind"),
    [
        ("People/Ana.md", "Ana swims.", "person", "note"),
        ("contacts/Ana.md", "Ana swims.", "person", "note"),
        ("Ana.md", "---\ntags: person\n---\nAna swims.", "person", "note"),
        ("Ana.md", "---\ntags: [friend]\n---\nAna swims. #person", "person", "note"),
        ("Ana.md", "---\nalias: Annie\n---\nAna swims.", "person", "note"),
        ("Ana.md", "---\nkind: person\n---\nAna swims.", "person", "note"),
        ("Porto.md", "---\ntype: place\naliases: [Oporto]\n---\nA city.", "place", "note"),
        ("journal/Ana.md", "type:: [[organization]]\n\n- A club.", "organisation", "journal"),
        ("Ana.md", "---\nkind: dream\n---\nAna swims.", "", "dream"),
        ("Ana.md", "Ana swims.", "", "note"),
    ],
)
def test_what_makes_a_page_an_entity(
    tmp_path: Path, rel: str, text: str, page_kind: str, kind: str
) -> None:
    _write(tmp_path, rel, text)
    [ep] = read_all([tmp_path]).episodes
    assert (ep.page_kind, ep.kind) == (page_kind, kind)
    assert ep.page_name == Path(rel).stem
