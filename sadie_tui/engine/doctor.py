"""Health checks, one line each with a fix where there is one: home, database, vss, model,
the model server (Ollama, or an OpenAI-compatible endpoint); and the repairs of what a crash
can leave behind (``repair``)."""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from ..paths import OTHERS, db_path
from .errors import (
    BrokenLogError,
    LockedError,
    ModelError,
    ModelTimeout,
    ModelUnreachable,
    SadieError,
)

if TYPE_CHECKING:
    from ..config import Settings
    from .store.db import Database


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # ok | warn | fail
    detail: str
    fix: str | None = None


def check_home(home: Path) -> Check:
    if home.exists() and not os.access(home, os.W_OK):
        return Check("home", "fail", f"{home} is not writable", f"chmod u+w {home}")
    if not home.exists():
        return Check("home", "warn", f"{home} does not exist yet", "it is created on first ingest")
    # A journal: neither the folder nor the database should let group or others in.
    open_to_others = [p for p in (home, db_path(home)) if _mode(p) & OTHERS]
    if open_to_others:
        modes = ", ".join(f"{p.name} {_mode(p):o}" for p in open_to_others)
        return Check(
            "home", "warn", f"{home} is readable by others ({modes})", f"chmod -R go-rwx {home}"
        )
    return Check("home", "ok", str(home))


def _mode(path: Path) -> int:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return 0


#: Whether the sadie holding the memory answers on its socket (the CLI asks ``/v1/health``).
HolderProbe = Callable[[], bool]


def check_holder(locked: LockedError, answers: HolderProbe | None) -> Check:
    """A memory held by another sadie is healthy when that sadie answers on its socket: every
    command then works through it. Only a holder that does not answer is a fault."""
    pid = f" (pid {locked.holder})" if locked.holder else ""
    if answers is not None and answers():
        return Check("memory", "ok", f"held by sadie{pid}, reachable")
    return Check("memory", "fail", f"{locked.message}, which does not answer", locked.fix)


def check_database(home: Path, holder: HolderProbe | None = None) -> list[Check]:
    """The vss extension, the memory file and its indexes; a memory another sadie holds is
    checked through ``holder`` (see ``check_holder``)."""
    # lazy: store.db loads only when check_database runs, off the start-up path
    from .store.db import vss_extension_path

    checks: list[Check] = []
    try:
        ext = vss_extension_path()
        checks.append(
            Check("vss extension", "ok", f"{ext.parent.name} from {ext.parent.parent.parent.name}")
        )
    except SadieError as exc:
        return [Check("vss extension", "fail", exc.message, exc.fix)]
    path = db_path(home)
    if not path.exists():
        checks.append(
            Check("database", "warn", f"no memory yet at {path}", "run `sadie ingest PATH`")
        )
        return checks
    try:
        db = _open_for_checks(path)
    except LockedError as exc:
        checks.append(check_holder(exc, holder))
        checks.append(check_keyword_index(home))
        return checks
    except SadieError as exc:
        checks.append(Check("database", "fail", exc.message, exc.fix))
        return checks
    try:
        checks.extend(_database_checks(db, path))
    except SadieError as exc:
        checks.append(Check("database", "fail", exc.message, exc.fix))
    finally:
        db.close()
    checks.append(check_keyword_index(home))
    return checks


def _open_for_checks(path: Path) -> Database:
    """The memory read-only. A log that DuckDB cannot replay read-only but can for writing (an
    HNSW index created on an empty table, as a new memory's migrations do: "Could not write
    file") is replayed first, as the next sadie command would; a damaged one still fails."""
    # lazy: store.db loads only when _open_for_checks runs, off the start-up path
    from .store.db import Database, connect

    try:
        return Database.open(path, read_only=True, wait=0.3)
    except BrokenLogError:
        connect(path, wait=0.3).close()  # closing checkpoints: the log is in the file
    return Database.open(path, read_only=True, wait=0.3)


def _database_checks(db: Database, path: Path) -> list[Check]:
    # lazy: store loads only when _database_checks runs, off the start-up path
    from .store import episodes as episode_store
    from .store.migrations import MIGRATIONS, pending

    missing = pending(db)
    if missing:
        # A new memory or an upgrade cut short (a crash): not a fault, and the tables the
        # checks below read may not be there yet.
        return [
            Check(
                "database",
                "warn",
                f"{path}: {len(missing)} of {len(MIGRATIONS)} schema steps not applied yet",
                "the next sadie command applies them, or `sadie doctor --repair`",
            )
        ]
    chunks = episode_store.count_chunks(db)
    episodes = episode_store.count_episodes(db)
    checks = [Check("database", "ok", f"{path} ({episodes} episodes, {chunks} chunks)")]
    if db.encrypted:
        # vss cannot keep an HNSW index in an encrypted file (``migrations.m005_vector_index``).
        checks.append(Check("vector index", "ok", "exact scan (an encrypted memory has no HNSW)"))
    elif episode_store.vector_index_in_use(db):
        checks.append(Check("vector index", "ok", "HNSW index in use"))
    else:
        checks.append(
            Check(
                "vector index",
                "fail",
                "HNSW index not used: vector search is a full scan",
                "run `sadie compact` to rebuild it",
            )
        )
    return checks


def repair(home: Path) -> list[str]:
    """What ``sadie doctor --repair`` mends, one line each: a write-ahead log that cannot be
    replayed (set aside), schema steps a crash left unapplied, replies left ``streaming``, a
    damaged keyword index (rebuilt now rather than at the next search)."""
    # lazy: memory loads only when repair runs, off the start-up path
    from .memory import Memory
    from .retrieval.keyword import rebuild_keyword_index
    from .store.db import Database
    from .store.repair import repair_log

    path = db_path(home)
    if not path.exists():
        return ["nothing to repair: there is no memory yet"]
    done: list[str] = []
    fixed = repair_log(path)
    if fixed is not None:
        done.append(fixed.one_line())
    with Database.open(path) as db:
        if db.migrated:
            done.append(f"applied {len(db.migrated)} schema steps an interrupted start had left")
    with Memory.open(home) as memory:
        if memory.interrupted:
            done.append(f"kept {memory.interrupted} replies a crash left streaming as interrupted")
        if check_keyword_index(home).status == "fail":
            index = rebuild_keyword_index(memory)
            done.append(f"rebuilt the damaged keyword index ({index.size} chunks)")
    return done or ["nothing to repair"]


def check_keyword_index(home: Path) -> Check:
    """The keyword index against its manifest (a damaged one is rebuilt on the next search)."""
    # lazy: retrieval.keyword.manifest loads only when check_keyword_index runs, off the start-up path
    from .retrieval.keyword.manifest import DamagedIndex, check
    from .retrieval.keyword.persist import index_dir

    # lazy: as above
    from .retrieval.keyword.sealed import sealed_path
    from .store.keycard import read_card

    rebuilt = "it is rebuilt from the memory on the next search"
    if read_card(home) is not None:
        sealed = sealed_path(home)
        if not sealed.is_file():
            return Check("keyword index", "warn", f"not built yet at {sealed}", rebuilt)
        return Check("keyword index", "ok", f"{sealed} (sealed: AES-GCM vouches for it)")
    folder = index_dir(home)
    try:
        state = check(folder)
    except DamagedIndex as exc:
        return Check("keyword index", "fail", f"{folder} is damaged: {exc}", rebuilt)
    if state == "missing":
        return Check("keyword index", "warn", f"not built yet at {folder}", rebuilt)
    if state == "outdated":
        return Check("keyword index", "warn", f"{folder} is from an older sadie", rebuilt)
    return Check("keyword index", "ok", str(folder))


def check_privacy(home: Path) -> list[Check]:
    """Whether the memory is encrypted at rest, and when it was last backed up."""
    # lazy: privacy loads only when check_privacy runs, off the start-up path
    from .privacy.backup import last_backup
    from .store.keycard import read_card

    # Both are said, not judged: a plain memory and one never backed up are the person's choice.
    if read_card(home) is not None:
        encryption = Check("encryption", "ok", "the memory is encrypted at rest")
    else:
        encryption = Check("encryption", "ok", "plain on disk (`sadie encrypt` encrypts it)")
    made = last_backup(home)
    said = f"last backup made {made}" if made else "never backed up (`sadie backup FILE`)"
    backed = Check("backup", "ok", said)
    return [encryption, backed]


def check_embedder(load: bool = True) -> Check:
    # lazy: ingest.embedder loads only when check_embedder runs, off the start-up path
    from .ingest.embedder import model_path, shared_embedder

    try:
        path = model_path()
    except SadieError as exc:
        return Check("embedding model", "fail", exc.message, exc.fix)
    if not load:
        return Check("embedding model", "ok", f"all-MiniLM-L6-v2 at {path}")
    embedder = shared_embedder()
    try:
        vec = embedder.encode_one("hello")
    except SadieError as exc:
        return Check("embedding model", "fail", exc.message, exc.fix)
    loaded = f"all-MiniLM-L6-v2 loaded ({vec.shape[0]} dimensions, {embedder.running})"
    if embedder.notice:
        return Check("embedding model", "warn", loaded, embedder.notice)
    return Check("embedding model", "ok", loaded)


def check_ollama(host: str, model: str, timeout: float = 2.0) -> list[Check]:
    try:
        with httpx.Client(base_url=host, timeout=timeout) as client:
            version = client.get("/api/version").json().get("version", "?")
            tags = client.get("/api/tags").json().get("models", [])
    except (httpx.HTTPError, ValueError) as exc:
        reason = "connection refused" if isinstance(exc, httpx.ConnectError) else type(exc).__name__
        return [
            Check(
                "ollama",
                "warn",
                f"not reachable at {host} ({reason}); answers will be offline extracts",
                "start it with `ollama serve`, or set OLLAMA_HOST (or ollama_host in"
                " config.toml, or F4 in the app)",
            ),
            Check("model", "warn", f"{model} not checked (Ollama unreachable)"),
        ]
    names = {m.get("name") for m in tags} | {m.get("model") for m in tags}
    wanted = model if ":" in model else f"{model}:latest"
    found = model in names or wanted in names
    checks = [Check("ollama", "ok", f"{host} (version {version})")]
    if found:
        checks.append(Check("model", "ok", f"{model} is pulled"))
    else:
        checks.append(
            Check("model", "fail", f"{model} is not pulled", f"run `ollama pull {model}`")
        )
    return checks


def check_openai(
    base_url: str,
    model: str,
    api_key: str | None = None,
    key_env: str = "OPENAI_API_KEY",
    timeout: float = 2.0,
) -> list[Check]:
    """The OpenAI-compatible endpoint (its ``/v1/models``) and whether it serves ``model``.
    The key is named by its variable, never shown."""

    # lazy: reasoners.openai loads only when check_openai runs, off the start-up path
    from .reasoners.openai import list_models

    try:
        served = [m.name for m in asyncio.run(list_models(base_url, api_key, timeout, key_env))]
    except ModelError as exc:
        away = isinstance(exc, ModelUnreachable | ModelTimeout)
        return [
            Check("openai endpoint", "warn" if away else "fail", exc.message, exc.fix),
            Check("model", "warn", f"{model} not checked (the endpoint did not answer)"),
        ]
    key = f"key from {key_env}" if api_key else f"no key in {key_env}"
    models = f"{len(served)} model{'' if len(served) == 1 else 's'}"
    checks = [Check("openai endpoint", "ok", f"{base_url} ({models}, {key})")]
    if model in served:
        checks.append(Check("model", "ok", f"{model} is served"))
    else:
        listed = ", ".join(served[:6]) or "none"
        checks.append(
            Check(
                "model",
                "fail",
                f"{model} is not served (it serves {listed})",
                "set SADIE_MODEL, or `model` in config.toml, to one it serves",
            )
        )
    return checks


def check_server_source(settings: Settings) -> Check:
    """Which address the model server is looked for at, and where it came from: a warning
    when config.toml and the environment both set it and differ (the environment wins)."""
    # lazy: reasoners.choose loads only when check_server_source runs, off the start-up path
    from .reasoners.choose import server_source

    source = server_source(settings)
    if not source.conflict:
        return Check("model server", "ok", source.describe())
    return Check(
        "model server",
        "warn",
        f"{source.describe()}; {source.conflict}",
        f"unset {source.variable}, or make it and `{source.setting}` in config.toml agree",
    )


def check_model_server(settings: Settings) -> list[Check]:
    """The server the settings point at (an OpenAI-compatible endpoint with ``reasoner =
    "openai"``, else Ollama), after the line saying which address that is and why."""
    # lazy: reasoners.kinds loads only when check_model_server runs, off the start-up path
    from .reasoners.kinds import kind_of

    check = _SERVER_CHECKS.get(kind_of(settings).name, _ollama_checks)
    return [check_server_source(settings), *check(settings)]


def _ollama_checks(s: Settings) -> list[Check]:
    return check_ollama(s.ollama_host, s.model)


def _openai_checks(s: Settings) -> list[Check]:
    return check_openai(s.openai_url, s.model, s.openai_key(), s.openai_api_key_env)


#: What doctor asks of each kind of server (``reasoners.kinds``); offline looks at Ollama's
#: address still, where ``auto`` would find its model.
_SERVER_CHECKS = {"ollama": _ollama_checks, "openai": _openai_checks}


def check_personas() -> list[Check]:
    """One warning for each persona file left out (the others work), else one ok line."""
    # lazy: personas loads only when check_personas runs, off the start-up path
    from .personas import load_personas

    try:
        personas = load_personas()
    except SadieError as exc:
        return [Check("personas", "warn", exc.one_line())]
    if not personas.problems:
        return [Check("personas", "ok", ", ".join(sorted(personas)))]
    return [
        Check("personas", "warn", problem.message, f"fix or remove {path}")
        for path, problem in personas.problems
    ]


def run_checks(
    home: Path,
    host: str,
    model: str,
    *,
    load_model: bool = True,
    settings: Settings | None = None,
    holder: HolderProbe | None = None,
) -> list[Check]:
    """Every check; the model server's from ``settings`` when given (Ollama at ``host``
    otherwise); ``holder`` asks the sadie holding the memory, if any, whether it answers."""
    checks = [check_home(home)]
    checks.extend(check_database(home, holder))
    checks.extend(check_privacy(home))
    checks.extend(check_personas())
    checks.append(check_embedder(load=load_model))
    if settings is not None:
        checks.extend(check_model_server(settings))
    else:
        checks.extend(check_ollama(host, model))
    return checks
