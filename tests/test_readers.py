"""Readers: front matter, dates, titles, kinds, JSONL records, derived files, text cleaning."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

import pytest

from sadie_tui.engine.ingest.readers import (
    ReadResult,
    Unreadable,
    clean_text,
    episode_id,
    read_all,
    read_path,
    split_front_matter,
)


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def read_one(path: Path) -> ReadResult:
    result = ReadResult()
    read_path(path, result)
    return result


def only_episode(path: Path):  # type: ignore[no-untyped-def]
    result = read_one(path)
    assert not result.skipped, result.skipped
    assert len(result.episodes) == 1
    return result.episodes[0]


# --------------------------------------------------------------------------- front matter


def test_front_matter_fields(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "notes/anything.md",
        "---\ntitle: Warden retro\ndate: 2026-03-14\nkind: meeting\nsalience: 0.8\n"
        "tags: [work, warden]\n---\n# A heading that is not the title\n\nShipped it.",
    )
    ep = only_episode(path)
    assert ep.title == "Warden retro"
    assert ep.occurred_at == datetime(2026, 3, 14)
    assert ep.kind == "meeting"
    assert ep.salience == 0.8
    assert ep.tags == ["work", "warden"]
    assert ep.text == "# A heading that is not the title\n\nShipped it."
    assert ep.source == str(path)
    assert ep.source_key == str(path.resolve())
    assert ep.id == episode_id(str(path.resolve()))


def test_front_matter_details(tmp_path: Path) -> None:
    ep = only_episode(
        write(
            tmp_path,
            "a.md",
            "---\ndate: 2026-03-14T08:30:00+02:00\nsalience: 7\ntags: a, b\n---\nx",
        )
    )
    assert ep.occurred_at == datetime(2026, 3, 14, 8, 30)  # naive local wall time
    assert ep.salience == 1.0  # clamped to 0–1
    assert ep.tags == ["a", "b"]
    ep = only_episode(write(tmp_path, "b.md", "---\nsalience: high\n---\nx"))
    assert ep.salience == 0.5


def test_split_front_matter() -> None:
    assert split_front_matter("no front matter") == ({}, "no front matter")
    assert split_front_matter("---\ntitle: x\n---\nbody\nmore") == ({"title": "x"}, "body\nmore")
    assert split_front_matter("---\n---\nbody") == ({}, "body")
    with pytest.raises(Unreadable, match="not closed"):
        split_front_matter("---\ntitle: x\nbody")
    with pytest.raises(Unreadable, match="bad front matter"):
        split_front_matter("---\ntitle: [oops\n---\nbody")
    with pytest.raises(Unreadable, match="key: value"):
        split_front_matter("---\n- a list\n---\nbody")
    with pytest.raises(Unreadable, match="bad front matter"):
        split_front_matter("---\na: !!python/object:os.system x\n---\nbody")


@pytest.mark.parametrize("bad_date", ["2026-13-45", "2026-02-30"])
def test_an_impossible_front_matter_date_is_a_named_skip_not_a_crash(
    tmp_path: Path, bad_date: str
) -> None:
    path = write(tmp_path, "a.md", f"---\ndate: {bad_date}\n---\nbody")
    result = read_one(path)
    assert not result.episodes
    assert [(s.name, "bad front matter" in s.reason) for s in result.skipped] == [(str(path), True)]


# --------------------------------------------------------------------------- dates


def test_date_from_front_matter_then_file_name_then_mtime(tmp_path: Path) -> None:
    fm = write(tmp_path, "2020-01-01-x.md", "---\ndate: 2026-03-14\n---\nbody")
    assert only_episode(fm).occurred_at == datetime(2026, 3, 14)
    named = write(tmp_path, "run-2026-11-02.md", "body")
    assert only_episode(named).occurred_at == datetime(2026, 11, 2)
    plain = write(tmp_path, "plain.md", "body")
    stamp = datetime(2024, 5, 6, 7, 8, 9).timestamp()
    os.utime(plain, (stamp, stamp))
    assert only_episode(plain).occurred_at == datetime(2024, 5, 6, 7, 8, 9)
    # An unparseable front-matter date or an impossible name date falls through.
    odd = write(tmp_path, "2026-02-31-odd.md", "---\ndate: someday\n---\nbody")
    os.utime(odd, (stamp, stamp))
    assert only_episode(odd).occurred_at == datetime(2024, 5, 6, 7, 8, 9)


# --------------------------------------------------------------------------- titles


def test_title_from_front_matter_heading_or_file_name(tmp_path: Path) -> None:
    assert (
        only_episode(write(tmp_path, "t1.md", "---\ntitle: Given\n---\n# Heading\nx")).title
        == "Given"
    )
    assert (
        only_episode(write(tmp_path, "t2.md", "intro\n\n## Race day ##\n\ntext")).title
        == "Race day"
    )
    assert (
        only_episode(write(tmp_path, "2026-11-26-commute_notes.txt", "um so")).title
        == "Commute notes"
    )
    assert only_episode(write(tmp_path, "2026-11-27.md", "text")).title == "2026-11-27"
    long_title = "x" * 500
    assert (
        len(only_episode(write(tmp_path, "t3.md", f"---\ntitle: {long_title}\n---\nx")).title)
        == 200
    )


# --------------------------------------------------------------------------- kinds


@pytest.mark.parametrize(
    ("rel", "kind"),
    [
        ("journal/a.md", "journal"),
        ("Journals/2026/a.md", "journal"),
        ("work/meetings/a.md", "meeting"),
        ("voice-memos/a.txt", "voice_memo"),
        ("voice/a.txt", "voice_memo"),
        ("VoiceMemos/a.txt", "voice_memo"),
        ("MEETINGS/a.md", "meeting"),
        ("memos/a.txt", "voice_memo"),
        ("records/a.md", "record"),
        ("notes/a.md", "note"),
        ("Memories/ideas/a.md", "note"),  # "memo" inside a longer word is not a memo
        ("journal/meetings/a.md", "meeting"),  # the nearest folder wins
    ],
)
def test_kind_from_folder(tmp_path: Path, rel: str, kind: str) -> None:
    assert only_episode(write(tmp_path, rel, "body")).kind == kind


def test_kind_from_front_matter_wins(tmp_path: Path) -> None:
    assert only_episode(write(tmp_path, "journal/a.md", "---\nkind: dream\n---\nx")).kind == "dream"


# --------------------------------------------------------------------------- JSONL records


def test_jsonl_records(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "records/runs-2026-01-01.jsonl",
        '{"title": "Easy run", "date": "2026-11-02", "text": "Easy 8 km.", "salience": 0.2,'
        ' "tags": ["run"]}\n'
        "\n"
        '{"content": "Intervals at the track\\nwith the club", "kind": "workout"}\n'
        "not json\n"
        "[1, 2]\n"
        '{"title": "nothing"}\n'
        '{"text": "Bad date falls back", "date": "2026-13-45"}\n',
    )
    result = read_one(path)
    assert result.files == 1
    first, second, third = result.episodes
    assert (first.title, first.occurred_at, first.text, first.kind) == (
        "Easy run",
        datetime(2026, 11, 2),
        "Easy 8 km.",
        "record",
    )
    assert (first.salience, first.tags) == (0.2, ["run"])
    assert first.source_key == f"{path.resolve()}#1"
    assert first.source == f"{path}#1"
    assert second.title == "Intervals at the track"
    assert second.kind == "workout"
    assert second.occurred_at == datetime(2026, 1, 1)  # from the file name
    assert third.occurred_at == datetime(2026, 1, 1)
    skipped = {s.name: s.reason for s in result.skipped}
    assert skipped == {
        f"{path}#4": "invalid JSON (Expecting value)",
        f"{path}#5": "not a JSON object",
        f"{path}#6": "record has no text",
    }


# --------------------------------------------------------------------------- cleaning


def test_control_characters_and_ansi_escapes_are_stripped(tmp_path: Path) -> None:
    raw = (
        "\ufeffplain \x1b[31mred\x1b[0m \x1b[1;4mbold\x1b[m \x1b]0;window title\x07"
        "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \x1b(B\x9b2Jbell\x07 nul\x00 del\x7f "
        "bs\x08 ff\x0c vt\x0b e\u0301 日本\r\nline\rnext\ttab"
    )
    cleaned = clean_text(raw)
    assert cleaned == "plain red bold link bell nul del bs ff vt e\u0301 日本\nline\nnext\ttab"
    assert not any(ord(c) < 32 and c not in "\n\t" for c in cleaned)
    assert "[31m" not in cleaned and "window title" not in cleaned
    ep = only_episode(write(tmp_path, "a.md", raw.replace("\x00", "").encode("utf-8")))
    assert "\x1b" not in ep.text and "[31m" not in ep.text and "\x9b" not in ep.text
    rec = read_one(
        write(tmp_path, "r.jsonl", '{"title": "t\\u001b[2Jx", "text": "a\\u001b[31mb"}\n')
    )
    assert (rec.episodes[0].title, rec.episodes[0].text) == ("tx", "ab")


# --------------------------------------------------------------------------- derived files


def test_derived_files_are_recognised_by_name(tmp_path: Path) -> None:
    write(tmp_path, "journal/2026-03-14.md", "Shipped it.")
    write(
        tmp_path,
        "beliefs.jsonl",
        '{"statement": "I sleep well", "status": "Contested", "confidence": 0.4,'
        ' "evidence": ["journal/2026-03-14.md", "records/runs.jsonl#2",'
        ' "3F7F7A68-0B1C-4D2E-9F00-1234567890AB"]}\n'
        '{"statement": "x", "status": "maybe"}\n'
        '{"status": "active"}\n',
    )
    write(
        tmp_path,
        "observations.jsonl",
        '{"source": "sleep", "observed_at": "2026-11-21T07:10:00", "text": "Slept 5h."}\n'
        '{"source": "sleep", "text": "no date"}\n',
    )
    write(tmp_path, "wiki/Ines.md", "---\ntitle: Ines\nkind: Person\n---\nMy partner.")
    write(tmp_path, "wiki/Warden.md", "The auth service.")
    write(tmp_path, "briefs/2026-11-23.md", "---\ntitle: Week\n---\nLong runs.")
    write(tmp_path, "today/2026-11-29.md", "# The garden\n\nThree weeks.")
    write(tmp_path, "soul.md", "---\nname: Maya\n---\nMaya, 34.")
    result = read_all([tmp_path])

    assert [ep.title for ep in result.episodes] == ["2026-03-14"]
    by_table: dict[str, list] = {}
    for d in result.derived:
        by_table.setdefault(d.table, []).append(d)
    assert sorted(by_table) == [
        "beliefs",
        "briefs",
        "observations",
        "soul",
        "today_cards",
        "wiki_entries",
    ]
    (belief,) = by_table["beliefs"]
    assert belief.fields["status"] == "contested"
    assert belief.fields["confidence"] == 0.4
    journal_key = str((tmp_path / "journal/2026-03-14.md").resolve())
    runs_key = str((tmp_path / "records/runs.jsonl").resolve()) + "#2"
    assert belief.fields["evidence"] == [
        episode_id(journal_key),
        episode_id(runs_key),
        "3f7f7a68-0b1c-4d2e-9f00-1234567890ab",
    ]
    (obs,) = by_table["observations"]
    assert obs.fields == {
        "source": "sleep",
        "observed_at": datetime(2026, 11, 21, 7, 10),
        "text": "Slept 5h.",
    }
    wiki = {d.fields["title"]: d.fields for d in by_table["wiki_entries"]}
    assert wiki["Ines"]["kind"] == "person"
    assert wiki["Warden"] == {"title": "Warden", "text": "The auth service.", "kind": "note"}
    assert by_table["briefs"][0].fields["occurred_at"] == datetime(2026, 11, 23)
    assert by_table["today_cards"][0].fields["title"] == "The garden"
    assert by_table["soul"][0].fields == {"text": "Maya, 34."}
    reasons = sorted(s.reason for s in result.skipped)
    assert reasons == [
        "belief has no statement",
        "observation needs text and observed_at",
        "unknown belief status 'maybe'",
    ]


# --------------------------------------------------------------------------- unreadable


def test_unreadable_files_are_named_with_a_reason(tmp_path: Path) -> None:
    cases = {
        "binary.md": (b"PK\x03\x04\x00\x00binary", "binary file"),
        "latin1.md": ("café au lait".encode("latin-1"), "not UTF-8 text (byte 0xe9 at offset 3)"),
        "broken.md": ("---\ntitle: [oops\n---\nbody", "bad front matter"),
        "unclosed.md": ("---\ntitle: x\nbody", "front matter is not closed"),
        "empty.md": ("", "empty file"),
        "blank.txt": (" \n\n\t\n", "empty file"),
        "only-front.md": ("---\ntitle: x\n---\n", "empty file"),
        "picture.png": (b"\x89PNG", "unsupported file type (.png)"),
    }
    for name, (content, _) in cases.items():
        write(tmp_path / "in", name, content)
    write(tmp_path / "in", "good.md", "fine")
    result = read_all([tmp_path / "in"])
    assert [ep.title for ep in result.episodes] == ["Good"]
    skipped = {Path(s.name).name: s.reason for s in result.skipped}
    assert set(skipped) == set(cases)
    for name, (_, reason) in cases.items():
        assert reason in skipped[name], (name, skipped[name])


def test_a_huge_file_is_rejected_by_size_without_reading(tmp_path: Path, monkeypatch) -> None:
    huge = tmp_path / "huge.md"
    with huge.open("wb") as fh:
        fh.truncate(50 * 1024 * 1024)  # sparse: instant, no disk used
    monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail("read a 50 MB file"))
    result = read_one(huge)
    assert [(s.name, s.reason) for s in result.skipped] == [
        (str(huge), "too large (52.4 MB; the limit is 10 MB)")
    ]


def test_missing_paths_and_symlink_loops(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    write(root, "a.md", "alpha")
    (root / "self").symlink_to(root / "self")
    (root / "ping.md").symlink_to(root / "pong.md")
    (root / "pong.md").symlink_to(root / "ping.md")
    (root / "sub").mkdir()
    (root / "sub" / "up").symlink_to(root)  # a directory cycle
    (root / "dangling.md").symlink_to(root / "gone.md")
    result = read_all([root, tmp_path / "nowhere"])
    assert [ep.text for ep in result.episodes] == ["alpha"]
    reasons = {Path(s.name).relative_to(tmp_path).as_posix(): s.reason for s in result.skipped}
    assert reasons == {
        "notes/self": "symlink loop",
        "notes/ping.md": "symlink loop",
        "notes/pong.md": "symlink loop",
        "notes/sub/up": "symlink loop (already visited)",
        "notes/dangling.md": "broken symlink (its target does not exist)",
        "nowhere": "no such file or directory",
    }


def test_hidden_files_are_ignored_and_order_is_stable(tmp_path: Path) -> None:
    write(tmp_path, ".obsidian/config.md", "settings")
    write(tmp_path, ".hidden.md", "secret")
    for name in ("c.md", "a.md", "b.txt"):
        write(tmp_path, name, name)
    result = read_all([tmp_path])
    assert [ep.text for ep in result.episodes] == ["a.md", "b.txt", "c.md"]
    assert not result.skipped
    assert result.files == 3


DEMO = Path(__file__).resolve().parent.parent / "data" / "demo"


@pytest.mark.skipif(not DEMO.is_dir(), reason="data/demo is not there")
def test_the_demo_memory_reads_cleanly_and_its_evidence_resolves() -> None:
    result = read_all([DEMO])
    assert result.skipped == []
    assert len(result.episodes) >= 300
    kinds = {ep.kind for ep in result.episodes}
    assert {"journal", "meeting", "voice_memo", "record"} <= kinds
    ids = {ep.id for ep in result.episodes}
    assert len(ids) == len(result.episodes)
    tables = {d.table for d in result.derived}
    assert tables == {"beliefs", "observations", "wiki_entries", "briefs", "today_cards", "soul"}
    beliefs = [d for d in result.derived if d.table == "beliefs"]
    assert any(b.fields["status"] == "contested" for b in beliefs)
    for belief in beliefs:
        missing = set(belief.fields["evidence"]) - ids
        assert not missing, (belief.fields["statement"], missing)


def test_each_file_goes_to_the_reader_its_suffix_and_sniff_pick(tmp_path: Path) -> None:
    from sadie_tui.engine.ingest.readers import SUFFIXES, reader_for

    cases = {
        "beliefs.jsonl": "beliefs",
        "BELIEFS.JSONL": "beliefs",
        "observations.jsonl": "observations",
        "runs.jsonl": "records",
        "soul.md": "soul",
        "wiki/soul.md": "soul",  # the soul's own name first, wherever it sits
        "wiki/Ana.md": "derived page",
        "briefs/monday.txt": "derived page",
        "journal/monday.md": "note",
        "idea.markdown": "note",
        "wiki/data.jsonl": "records",  # a derived folder's pages are text, not records
        "work.ics": "calendar",
        "run.gpx": "GPX workout",
        "ride.FIT": "FIT workout",
        "export.json": "Day One",
        "bank.csv": "CSV",
    }
    for rel, name in cases.items():
        found = reader_for(tmp_path / rel)
        assert found is not None and found.name == name, rel
    assert reader_for(tmp_path / "photo.png") is None
    assert reader_for(tmp_path / "Makefile") is None
    assert SUFFIXES == {
        *(".md", ".markdown", ".txt", ".text", ".jsonl"),
        *(".ics", ".gpx", ".fit", ".json", ".csv"),
    }


def test_a_reader_with_a_sniff_is_preferred_whatever_its_place(tmp_path: Path) -> None:
    from sadie_tui.engine.ingest.reader import Reader, pick

    said: list[str] = []
    plain = Reader("plain", frozenset({".log"}), lambda path, *_: said.append("plain"))
    shebang = Reader(
        "shebang",
        frozenset({".log"}),
        lambda path, *_: said.append("shebang"),
        sniff=lambda path: path.read_text("utf-8").startswith("#!"),
    )
    script = write(tmp_path, "a.log", "#! run me")
    prose = write(tmp_path, "b.log", "just words")
    assert pick((plain, shebang), script) is shebang
    assert pick((plain, shebang), prose) is plain
    assert pick((shebang,), prose) is None  # a sniff that refuses, and no reader without one
    assert pick((plain, shebang), tmp_path / "c.txt") is None


def test_an_unsupported_file_given_by_name_is_named_with_its_type(tmp_path: Path) -> None:
    result = read_one(write(tmp_path, "photo.PNG", b"\x89PNG"))
    assert [(s.name, s.reason) for s in result.skipped] == [
        (str(tmp_path / "photo.PNG"), "unsupported file type (.PNG)")
    ]
    result = read_one(write(tmp_path, "README", "words"))
    assert result.skipped[0].reason == "unsupported file type (no extension)"
