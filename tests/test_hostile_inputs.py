"""Issue 34, items 15-25: the inputs an attack found still hurting. A ``.sadieignore`` that
backtracks for ever or does not compile, a calendar event repeating for ever, special files
given to `conversations import`, control characters in file names, a corrupt FIT file, the
rates file's mode, one huge CSV cell.

Real parts: `sadie` subprocesses on a fresh home (a real DuckDB file, the real embedder), the
readers on real files, the memory served on its socket (``hold``) for the holder's side.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sadie_tui.config import Settings
from sadie_tui.engine.ingest.readers import read_all
from sadie_tui.engine.reasoners.rates import RATES_FILE, Rates
from sadie_tui.engine.session import Session
from sadie_tui.serve.holder import hold
from sadie_tui.serve.remote import RemoteSession

ROOT = Path(__file__).resolve().parent.parent
# A bound on a run that must finish, not a guess at how long it takes: before the fixes these
# runs did not end at all.
SECONDS = 240


def _env(home: Path, tmp: Path) -> dict[str, str]:
    env = dict(os.environ, SADIE_HOME=str(home), SADIE_CONFIG=str(tmp / "config"))
    env["OLLAMA_HOST"] = "http://127.0.0.1:9"
    env.pop("COLUMNS", None)
    return env


def _sadie(home: Path, tmp: Path, *args: str, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sadie_tui.cli", *args],
        capture_output=True,
        text=True,
        env=_env(home, tmp),
        cwd=ROOT,
        timeout=SECONDS,
        **kw,  # type: ignore[call-overload]
    )


def _write(root: Path, rel: str, text: str = "A note about the garden and Ines.\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- .sadieignore

COSTLY = "*a*a*a*a*a*b"  # six wildcards in one part: hours on a name of a hundred a's


def _ignoring_folder(root: Path, ignore: str) -> Path:
    _write(root, ".sadieignore", ignore)
    _write(root, "data/secret.md", "Left out by the collapsed stars.\n")
    _write(root, "notes/a-rather-long-name-for-a-plain-note.md")
    _write(root, "a" * 120 + ".md", "Kept: the costly pattern is skipped.\n")
    return root


def test_a_sadieignore_pattern_never_backtracks_for_ever(tmp_path: Path) -> None:
    """Fourteen stars then ``a/`` (minutes at 100 % CPU before) are one star, as git reads
    them; a pattern too costly to match is named and skipped, and the rest applies."""
    folder = _ignoring_folder(tmp_path / "notes", "*" * 14 + "a/\n" + COSTLY + "\n")
    done = _sadie(tmp_path / "home", tmp_path, "ingest", str(folder))
    assert done.returncode == 6, done.stderr  # partial: a line of it was skipped
    said = done.stdout + done.stderr
    costly = [line for line in said.splitlines() if COSTLY in line]
    assert len(costly) == 1 and "too costly" in costly[0], said
    result = read_all([folder])
    kept = sorted(Path(e.source).relative_to(folder).as_posix() for e in result.episodes)
    assert kept == ["a" * 120 + ".md", "notes/a-rather-long-name-for-a-plain-note.md"]
    assert [Path(s.name).name for s in result.ignored] == ["data"]


def test_a_bad_sadieignore_line_is_named_and_the_rest_applies(tmp_path: Path) -> None:
    folder = _ignoring_folder(tmp_path / "notes", "[z-a]\ndata/\n")
    done = _sadie(tmp_path / "home", tmp_path, "ingest", str(folder))
    assert done.returncode == 6, done.stderr  # partial: a line of it was skipped
    said = done.stdout + done.stderr
    assert "Traceback" not in said
    named = [line for line in said.splitlines() if "[z-a]" in line]
    assert len(named) == 1 and "bad pattern" in named[0], said
    assert " ".join(said.split()).startswith("added 2"), said  # data/ left out by line 2


def test_a_bad_sadieignore_line_through_the_holder(
    memory_home: Path, embedder, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    folder = _ignoring_folder(tmp_path / "notes", "[z-a]\ndata/\n")
    session = Session.open(memory_home, Settings(ollama_host="http://127.0.0.1:9"))
    holder = hold(session)
    assert holder is not None
    try:
        client = RemoteSession(
            memory_home, session.settings, memory_home / "sadie.sock", holder="the test"
        )
        report = client.ingest([folder])
        assert report.added == 2
        [skip] = report.skipped
        assert skip.name.endswith(".sadieignore") and "[z-a]" in skip.reason
    finally:
        holder.stop()
        session.close()


# --------------------------------------------------------------------------- the rates file


def test_the_rates_file_is_private(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        rates = Rates(tmp_path / RATES_FILE)
        rates.record("m", prompt_tokens=100, prompt_seconds=1.0, eval_tokens=10, eval_seconds=1.0)
        rates.save()
    finally:
        os.umask(old)
    assert oct((tmp_path / RATES_FILE).stat().st_mode & 0o777) == "0o600"
    assert not list(tmp_path.glob("*.tmp"))


def test_a_rates_file_made_before_is_made_private(tmp_path: Path) -> None:
    path = tmp_path / RATES_FILE
    path.write_text("{}", encoding="utf-8")
    path.chmod(0o644)
    rates = Rates(path)
    rates.record("m", prompt_tokens=100, prompt_seconds=1.0, eval_tokens=10, eval_seconds=1.0)
    rates.save()
    assert oct(path.stat().st_mode & 0o777) == "0o600"


# --------------------------------------------------------------------------- calendars

FOREVER = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//tests//EN
BEGIN:VEVENT
UID:forever@tests
DTSTART:{start}
DTEND:{end}
SUMMARY:Ping
RRULE:FREQ={freq}
END:VEVENT
BEGIN:VEVENT
UID:standup@tests
DTSTART:{start}
DTEND:{end}
SUMMARY:Standup
RRULE:FREQ=WEEKLY;COUNT=10
END:VEVENT
END:VCALENDAR
"""

# Reads the calendar in a process whose address space may not pass 1.5 GB: before the bound,
# the expansion grew without end (2.2 GB in 90 s).
READ_CALENDAR = """
import json, resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (1536 * 2**20, resource.RLIM_INFINITY))
from sadie_tui.engine.ingest.calendar import read_calendar
from sadie_tui.engine.ingest.raw import ReadResult
result = ReadResult()
read_calendar(Path(sys.argv[1]), "cal.ics", result)
titles = [d.fields["text"].split(",")[0] for d in result.derived]
print(json.dumps({"titles": titles, "skipped": [[s.name, s.reason] for s in result.skipped]}))
"""


@pytest.mark.parametrize(
    ("freq", "many"), [("SECONDLY", False), ("MINUTELY", False), ("HOURLY", True)]
)
def test_an_event_repeating_for_ever_is_bounded(tmp_path: Path, freq: str, many: bool) -> None:
    import json
    from datetime import datetime, timedelta

    from sadie_tui.engine.ingest.calendar import MAX_OCCURRENCES

    start = datetime.now().replace(microsecond=0) - timedelta(days=30)
    path = tmp_path / "cal.ics"
    path.write_text(
        FOREVER.format(
            start=f"{start:%Y%m%dT%H%M%S}",
            end=f"{start + timedelta(seconds=1):%Y%m%dT%H%M%S}",
            freq=freq,
        ),
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-c", READ_CALENDAR, str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=SECONDS,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    read = json.loads(done.stdout)
    pings = [t for t in read["titles"] if t == "Calendar event: Ping"]
    assert read["titles"].count("Calendar event: Standup") == 10
    [(name, reason)] = read["skipped"]
    assert name.endswith("#forever@tests") and "Ping" in reason, reason
    if many:  # an hour apart: expanded up to the cap, the rest said
        assert len(pings) == MAX_OCCURRENCES and f"first {MAX_OCCURRENCES:,}" in reason
    else:  # too often to expand at all: kept once, and said
        assert len(pings) == 1 and "too often" in reason


# --------------------------------------------------------------------------- conversations import


@pytest.mark.parametrize("special", ["/dev/zero", "fifo", "folder"])
def test_conversations_import_takes_regular_files_only(tmp_path: Path, special: str) -> None:
    """``/dev/zero`` grew to 12.7 GB in 20 s and a FIFO blocked for ever: each is now one
    line, exit 2, at once (the run is bounded by SECONDS, and a FIFO with no writer would
    block its open for ever)."""
    if special == "fifo":
        path = tmp_path / "pipe"
        os.mkfifo(path)
    elif special == "folder":
        path = tmp_path / "folder"
        path.mkdir()
    else:
        path = Path(special)
    done = _sadie(tmp_path / "home", tmp_path, "conversations", "import", str(path))
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "not a regular file" in lines[0], done.stderr
    assert str(path) in lines[0]


def test_conversations_import_of_a_file_over_the_limit(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as out:
        out.truncate(11 * 2**20)  # sparse: 11 MB that cost nothing to write
    done = _sadie(tmp_path / "home", tmp_path, "conversations", "import", str(big))
    assert done.returncode == 2, done.stderr
    assert "larger than 10 MB" in done.stderr and len(done.stderr.strip().splitlines()) == 1


# --------------------------------------------------------------------------- names with controls


def test_a_newline_in_a_file_name_never_starts_a_line(tmp_path: Path) -> None:
    """``evil\\nsadie: fake line injected.md`` printed a second line that looked like
    sadie's, and split its title in the search table: every name is shown on its line, its
    controls as stand-ins (a newline ``␊``)."""
    folder = tmp_path / "notes"
    _write(folder, "evil\nsadie: fake line injected.md", "The orchard was in bloom.\n")
    (folder / "worse\tone\nsadie: all is well.md").write_bytes(b"\x00\xff\x00binary")
    home = tmp_path / "home"
    ingest = _sadie(home, tmp_path, "ingest", str(folder))
    assert ingest.returncode == 6, ingest.stderr  # the binary one skipped
    said = (ingest.stdout + ingest.stderr).splitlines()
    assert not [line for line in said if line.startswith("sadie: ")], said
    [skip] = [line for line in said if line.startswith("skipped /")]
    assert "worse␉one␊sadie: all is well.md" in skip, skip
    found = _sadie(home, tmp_path, "search", "orchard bloom")
    assert found.returncode == 0, found.stderr
    lines = found.stdout.splitlines()
    assert not [line for line in lines if "fake line" in line and "evil" not in line.lower()], lines
    assert any("vil␊sadie: fake line injected" in line for line in lines), found.stdout


# --------------------------------------------------------------------------- a corrupt FIT file


def _corrupt_fit(path: Path, seed: int) -> None:
    """A FIT activity of 300 records (fit-tool), 30 of its bytes past the header overwritten
    by ``random.Random(seed)``: what a damaged download looks like to the parser."""
    import random
    from datetime import datetime

    from fit_tool.fit_file_builder import FitFileBuilder
    from fit_tool.profile.messages.file_id_message import FileIdMessage
    from fit_tool.profile.messages.record_message import RecordMessage
    from fit_tool.profile.profile_type import FileType, Manufacturer

    ms = round(datetime(2026, 3, 1, 8).timestamp() * 1000)
    builder = FitFileBuilder(auto_define=True)
    file_id = FileIdMessage()
    file_id.type = FileType.ACTIVITY
    file_id.manufacturer = Manufacturer.DEVELOPMENT.value
    file_id.product = 0
    file_id.time_created = ms
    file_id.serial_number = 1
    builder.add(file_id)
    for i in range(300):
        record = RecordMessage()
        record.timestamp = ms + i * 1000
        record.distance = i * 3.0
        record.heart_rate = 120 + i % 40
        builder.add(record)
    builder.build().to_file(str(path))
    data = bytearray(path.read_bytes())
    chance = random.Random(seed)
    for _ in range(30):
        data[chance.randrange(14, len(data) - 2)] = chance.randrange(256)
    path.write_bytes(bytes(data))


def test_a_corrupt_fit_file_is_one_skip_line(tmp_path: Path) -> None:
    """Issue 34, item 23: the skip line came with hundreds of fitdecode UserWarnings on
    stderr; some damage even raised out of the parser (a traceback, nothing ingested)."""
    folder = tmp_path / "workouts"
    folder.mkdir()
    seeds = (16, 17, 38, 39)  # a TypeError; warnings then a parse error; two ValueErrors
    for seed in seeds:
        _corrupt_fit(folder / f"ride-{seed}.fit", seed)
    _write(folder, "2026-03-01.md", "Rode to the coast and back.\n")
    done = _sadie(tmp_path / "home", tmp_path, "ingest", "--quiet", str(folder))
    said = done.stdout + done.stderr
    assert "Traceback" not in said and "Warning" not in said, said[-3000:]
    skips = [line for line in said.splitlines() if line.startswith("skipped /")]
    named = {Path(line.split(":")[0].removeprefix("skipped ")).name for line in skips}
    assert named == {f"ride-{seed}.fit" for seed in seeds} and len(skips) == len(seeds), skips
    assert all("not a readable FIT file" in line for line in skips), skips
    assert done.stderr.strip() == "", done.stderr[-3000:]
    assert done.returncode == 6 and "added 1" in " ".join(said.split())


# --------------------------------------------------------------------------- one huge CSV cell


def test_one_csv_cell_over_128_kb_does_not_skip_the_file(tmp_path: Path) -> None:
    """Issue 34, item 25: one cell over the csv module's 128 KB field limit skipped the whole
    file as "line 1"; the row is read (its cell cut as every cell is) and so are the others."""
    import json

    from sadie_tui.engine.ingest.csvmap import MAX_CELL

    folder = tmp_path / "exports"
    folder.mkdir()
    huge = "word " * 40_000  # 200 KB
    (folder / "diary.csv").write_text(
        "Date,Entry\n"
        "2026-03-01,Walked to the lighthouse.\n"
        f'2026-03-02,"{huge}"\n'
        "2026-03-03,Baked bread with Ines.\n",
        encoding="utf-8",
    )
    done = _sadie(
        tmp_path / "home",
        tmp_path,
        "ingest",
        "--json",
        "--map",
        "date=Date,text=Entry,source=diary",
        str(folder / "diary.csv"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["derived"]["observations"] == 3 and report["skipped"] == []
    assert MAX_CELL < len(huge)


def test_two_rules_of_one_event_are_bounded_together(tmp_path: Path) -> None:
    from datetime import datetime, timedelta

    from sadie_tui.engine.ingest.calendar import read_calendar
    from sadie_tui.engine.ingest.raw import ReadResult

    start = datetime.now().replace(microsecond=0) - timedelta(days=1)
    text = FOREVER.format(
        start=f"{start:%Y%m%dT%H%M%S}", end=f"{start:%Y%m%dT%H%M%S}", freq="DAILY"
    ).replace("RRULE:FREQ=DAILY\n", "RRULE:FREQ=DAILY\nRRULE:FREQ=SECONDLY\n")
    path = tmp_path / "cal.ics"
    path.write_text(text, encoding="utf-8")
    result = ReadResult()
    read_calendar(path, "cal.ics", result)
    [skip] = result.skipped
    assert "too often" in skip.reason and "DAILY+SECONDLY" in skip.reason
