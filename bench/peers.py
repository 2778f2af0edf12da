"""Side by side: sadie, elia-chat 1.10.0 and oterm 0.26.1 in tmux 120×40, polled with
``capture-pane`` every 50 ms, against one scripted Ollama-protocol server, interleaved
(sadie, elia, oterm, sadie, …) so a busy moment on the machine hits every app alike.

Per launch: launch → first paint (each app's ready screen); for sadie, launch → embedding
model ready (the status line drops "opening memory…" and "embedding model loading…"); then
``--messages`` messages, typed the same way in each app (the text with ``send-keys -l``, then
the app's send key: Enter for sadie and oterm, Ctrl+J for elia, whose Enter is a newline).
The first is typed 2 s after launch (or 1 s after paint if later), each next one 2 s after the
previous answer's first word. Every reply starts with its own word, so Enter → first answer
word is read off the screen; the server notes when each answer request arrives (same clock),
which splits that time into the app's work before the request and the rest. RSS is the sum of
VmRSS over the app's process tree (the pane shell's descendants) from /proc, sampled with every
poll; VmHWM of the main process is read at the end as a check on what the polls missed.

The peers live outside the project, in venvs under ``~/.cache/sadie-bench/peers`` (or
``SADIE_BENCH_PEERS``), made once by ``--setup`` (the only step that needs the network: pip
from PyPI). Each launch gets throwaway HOME and XDG folders; sadie gets a copy of a small
ingested memory and a warm ONNX cache (``SADIE_CACHE``, exported before the first launch).

Run: ``.venv/bin/python bench/peers.py --setup`` once, then
``.venv/bin/python bench/peers.py [--runs 5] [--messages 3] [--apps sadie,elia,oterm]``
(``make bench-peers`` does both). ``--probe APP`` launches one app once, prints its screens and
what the server received.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support import ollama_server  # noqa: E402
from tests.support.ollama_server import (  # noqa: E402
    DEFAULT_MODEL,
    FakeOllama,
    Reply,
    default_responder,
    split_pieces,
)
from tests.support.tmux import Tmux, sadie_command  # noqa: E402

POLL = 0.05
SIZE = (120, 40)
PEERS = {"elia": "elia-chat==1.10.0", "oterm": "oterm==0.26.1"}
# A distinct first word per message of a launch, absent from every question and screen.
WORDS = ("Kestrel", "Heron", "Plover", "Curlew", "Dunlin", "Avocet", "Godwit", "Lapwing")
FIRST_AFTER_LAUNCH = 2.0  # the first message: 2 s after launch (or PAINT_GRACE after paint)
PAINT_GRACE = 1.0
BETWEEN = 2.0  # next message: this long after the previous answer's first word
SETTLE = 10.0  # the idle RSS sample: this long after ready (and after the last answer)


def peers_root() -> Path:
    return Path(os.environ.get("SADIE_BENCH_PEERS", "~/.cache/sadie-bench/peers")).expanduser()


def question(n: int) -> str:
    return f"Tell me about Maya, question number {n}."


# --------------------------------------------------------------------------- pure helpers


def parse_stat(text: str) -> tuple[int, int]:
    """``(pid, ppid)`` from a /proc/PID/stat line; the command name may hold spaces and ')'."""
    head, _, rest = text.rpartition(")")
    pid = int(head.split("(", 1)[0])
    return pid, int(rest.split()[1])


def parse_status_kib(text: str, key: str = "VmRSS") -> int:
    """A ``kB`` field of /proc/PID/status (0 when absent: a zombie or a kernel thread)."""
    for line in text.splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1])
    return 0


def descendants(root: int, parents: Mapping[int, int]) -> list[int]:
    """Every process below ``root`` (not ``root`` itself) in a pid → ppid map."""
    children: dict[int, list[int]] = {}
    for pid, ppid in parents.items():
        children.setdefault(ppid, []).append(pid)
    found: list[int] = []
    stack = list(children.get(root, []))
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, []))
    return sorted(found)


def tree_kib(root: int, parents: Mapping[int, int], rss: Mapping[int, int]) -> int:
    return sum(rss.get(pid, 0) for pid in descendants(root, parents))


def word_number(text: str) -> int | None:
    """The message number a question carries (the last one: a prompt may hold the history)."""
    found = re.findall(r"question number (\d+)", text)
    return int(found[-1]) if found else None


def spread(values: Sequence[float], unit: str, digits: int) -> str:
    """``median (min–max)`` or an em dash when nothing was measured."""
    if not values:
        return "—"
    med, lo, hi = statistics.median(values), min(values), max(values)
    return f"{med:.{digits}f} {unit} ({lo:.{digits}f}–{hi:.{digits}f})"


def table(
    rows: Sequence[tuple[str, Mapping[str, Sequence[float]], str, int]], apps: Sequence[str]
) -> str:
    """A Markdown table: one row per measure, one column per app, median (min–max)."""
    lines = [
        "| median (min–max) | " + " | ".join(apps) + " |",
        "| --- | " + " | ".join("---" for _ in apps) + " |",
    ]
    for label, values, unit, digits in rows:
        cells = [spread(values.get(app, []), unit, digits) for app in apps]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# --------------------------------------------------------------------------- /proc


def proc_snapshot() -> tuple[dict[int, int], dict[int, int]]:
    """pid → ppid and pid → VmRSS (KiB) of every process readable now."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                pid, ppid = parse_stat(f.read())
            with open(f"/proc/{entry.name}/status") as f:
                rss[pid] = parse_status_kib(f.read())
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
        parents[pid] = ppid
    return parents, rss


def vm_hwm_kib(pid: int) -> int:
    try:
        return parse_status_kib(Path(f"/proc/{pid}/status").read_text(), "VmHWM")
    except OSError:
        return 0


# --------------------------------------------------------------------------- the server


def scripted_reply(body: dict) -> Reply:
    """The same reply for every app: its first word names the message it answers.

    Structured requests (sadie's emotion choice and the like) get the default JSON."""
    if ollama_server._format_of(body) is not None:
        return default_responder(body)
    users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
    last = users[-1].get("content", "") if users else ""
    text = last if isinstance(last, str) else json.dumps(last)
    n = word_number(text) or word_number(json.dumps(body)) or 1
    word = WORDS[(n - 1) % len(WORDS)]
    prose = f"{word}: you wrote that Maya is moving to Leeds in May, after the walk by the river."
    return Reply(content=split_pieces(prose, (3, 4, 5, 4)))


class _PeersHandler(ollama_server._Handler):
    """The scripted server plus Ollama's OpenAI-compatible chat endpoint, which oterm 0.26
    uses (through pydantic-ai) where sadie and elia's litellm use ``/api/chat``.

    Same replies, in the OpenAI stream format Ollama sends: ``data: {chunk}`` events with
    ``choices[0].delta``, a last chunk with ``finish_reason``, then ``data: [DONE]``."""

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0] == "/v1/models":
            self.server.fake._hit("GET", self.path)
            models = [
                {"id": m, "object": "model", "created": 0, "owned_by": "library"}
                for m in self.server.fake.models
            ]
            self._send_json(200, {"object": "list", "data": models})
            return
        super().do_GET()

    def do_POST(self) -> None:
        if self.path.split("?", 1)[0] != "/v1/chat/completions":
            super().do_POST()
            return
        fake = self.server.fake
        fake._hit("POST", self.path)
        body = self._json_body()
        if body is None:
            return
        fake._record(body)
        model = body.get("model") or ""
        if not fake._has_model(model):
            self._send_json(404, {"error": {"message": f'model "{model}" not found'}})
            return
        reply = fake._next_reply(body)
        created = int(time.time())

        def chunk(delta: dict, finish: str | None = None) -> dict:
            return {
                "id": "chatcmpl-1",
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "system_fingerprint": "fp_ollama",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }

        if body.get("stream") is not True:
            message = {"role": "assistant", "content": reply.text}
            self._send_json(
                200,
                {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "created": created,
                    "model": model,
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                },
            )
            return
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for piece in reply.content:
                self._wait(reply.delay)
                self._event(chunk({"role": "assistant", "content": piece}))
            self._event(chunk({"role": "assistant", "content": ""}, reply.done_reason))
            self._write_chunk(b"data: [DONE]\n\n")
            self._write_chunk(b"")
        except (ollama_server._Dropped, OSError):
            self.close_connection = True

    def _event(self, obj: dict) -> None:
        data = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
        self._write_chunk(f"data: {data}\n\n".encode())


class PeersServer(FakeOllama):
    """FakeOllama answering with :func:`scripted_reply` on both wire formats."""

    def __init__(self) -> None:
        super().__init__(responder=scripted_reply)
        self.arrived: list[float] = []  # perf_counter of each answer request (not structured)

    def _next_reply(self, body: dict) -> Reply:
        if ollama_server._format_of(body) is None:
            with self._lock:
                self.arrived.append(time.perf_counter())
        return super()._next_reply(body)

    def arrival_after(self, moment: float) -> float | None:
        with self._lock:
            return next((t for t in self.arrived if t >= moment), None)

    def start(self) -> PeersServer:
        if self._server is not None:
            return self
        self._stopping.clear()
        server = ollama_server._Server((self.host, self.port), _PeersHandler)
        server.fake = self
        self._server = server
        self.port = server.server_address[1]
        self.url = f"http://{self.host}:{self.port}"
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self


# --------------------------------------------------------------------------- the apps


def sadie_ready(screen: str) -> bool:
    """The status line is up and neither the memory nor the embedding model is loading."""
    return (
        re.search(r"● \S+ online|● offline", screen) is not None
        and "opening memory" not in screen
        and "embedding model loading" not in screen
    )


@dataclass
class App:
    """One app as the bench drives it."""

    name: str
    command: list[str]
    painted: Callable[[str], bool]
    send_key: str
    # sadie's second milestone; peers are ready when painted
    ready: Callable[[str], bool] | None = None
    template: Path | None = None  # a prepared home folder, copied for each launch
    env: dict[str, str] = field(default_factory=dict)

    def launch_env(self, home: Path) -> dict[str, str]:
        return {**own_home(home), "TERM": "xterm-256color", "COLORTERM": "truecolor", **self.env}


def own_home(home: Path) -> dict[str, str]:
    """HOME and the XDG folders under ``home``, and no PYTHONPATH: an app sees nothing else."""
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "PYTHONPATH": "",
    }


def isolated(home: Path) -> dict[str, str]:
    return {**os.environ, **own_home(home)}


def sadie_app(scratch: Path, sadie_cache: Path) -> App:
    os.environ["SADIE_CACHE"] = str(sadie_cache)  # the template's embedder exports/warms it
    from tests.support.tui import copy_home

    template = scratch / "sadie-template"
    memory = copy_home(template)  # ingests the test notes once; warms the ONNX file
    # What `make install` does after installing: the ONNX export (done by now) and the
    # emotion registers' vectors, so no launch embeds them itself.
    subprocess.run(
        [sys.executable, "-m", "sadie_tui.engine.ingest.prepare_model"],
        check=True,
        capture_output=True,
        env={**os.environ, "SADIE_CACHE": str(sadie_cache)},
    )
    return App(
        name="sadie",
        command=sadie_command(),
        painted=lambda s: "Talk to sadie" in s,
        send_key="Enter",
        ready=sadie_ready,
        template=template,
        env={
            "SADIE_HOME": "{home}/" + memory.name,
            "SADIE_CONFIG": "{home}/sadie-config",
            "SADIE_CACHE": str(sadie_cache),
            "OLLAMA_HOST": "{url}",
            "PYTHONPATH": str(ROOT),
        },
    )


def elia_app(scratch: Path, url: str) -> App:
    venv = peers_root() / "elia"
    template = scratch / "elia-template"
    config = template / ".config/elia"
    config.mkdir(parents=True)
    # litellm's ollama_chat provider streams from {api_base}/api/chat, as sadie does.
    (config / "config.toml").write_text(
        'default_model = "bench"\n\n[[models]]\nid = "bench"\n'
        f'name = "ollama_chat/{DEFAULT_MODEL}"\napi_base = "{url}"\n',
        encoding="utf-8",
    )
    subprocess.run(  # the database elia would create (and announce) at its first launch
        [
            str(venv / "bin/python"),
            "-c",
            "import asyncio, elia_chat.app; from elia_chat.database.database import create_database; "
            "asyncio.run(create_database())",
        ],
        env=isolated(template),
        check=True,
        capture_output=True,
    )
    return App(
        name="elia",
        command=[str(venv / "bin/elia")],
        painted=lambda s: "Enter your message" in s or "Send message" in s,
        send_key="C-j",
        template=template,
        # litellm fetches its model price list from GitHub at import unless told not to.
        env={"LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )


def oterm_app(scratch: Path) -> App:
    venv = peers_root() / "oterm"
    template = scratch / "oterm-template"
    data = template / ".local/share/oterm"
    data.mkdir(parents=True)
    # One saved chat on the served model, so launch opens straight onto its prompt.
    script = (
        "import asyncio\n"
        "from oterm.store.store import Store\n"
        "from oterm.types import ChatModel\n"
        "async def main():\n"
        "    store = await Store.get_store()\n"
        f"    await store.save_chat(ChatModel(name='bench', model='{DEFAULT_MODEL}'))\n"
        "asyncio.run(main())\n"
    )
    env = {**isolated(template), "OTERM_DATA_DIR": str(data)}
    subprocess.run([str(venv / "bin/python"), "-c", script], env=env, check=True)
    return App(
        name="oterm",
        command=[str(venv / "bin/oterm")],
        painted=lambda s: "⏎ submit" in s,  # the chat's prompt, after the splash
        send_key="Enter",
        template=template,
        env={
            "OTERM_DATA_DIR": "{home}/.local/share/oterm",
            "OLLAMA_URL": "{url}",
            "OLLAMA_HOST": "{hostport}",
        },
    )


# --------------------------------------------------------------------------- one launch


class Watch(Tmux):
    """One app in a private tmux server, its screen and process tree sampled every POLL.

    Milestones are predicates on the screen; the first frame each holds in is timed (on the
    bench's ``perf_counter`` clock, just after ``capture-pane`` returned)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"sadie-peers-{os.getpid()}-{name}", record=False)
        self.seen: dict[str, float] = {}
        self.rss_at: dict[str, int] = {}  # tree RSS (KiB) at each milestone
        self.samples: list[tuple[float, int]] = []
        self.frames: list[str] = []
        self.keep_frames = False
        self.pane_pid = 0
        self.main_pid = 0
        self._pending: dict[str, Callable[[str], bool]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def expect(self, name: str, predicate: Callable[[str], bool]) -> None:
        with self._lock:
            self._pending[name] = predicate

    def launch(self, command: list[str], env: dict[str, str]) -> float:
        started = self.start(command, env, SIZE, linger=120)
        out = self.run("display-message", "-p", "-t", self.session, "#{pane_pid}")
        self.pane_pid = int(out.stdout.strip())
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()
        return started

    def _poll(self) -> None:
        while not self._stop.is_set():
            screen = self.screen()
            now = time.perf_counter()
            parents, rss = proc_snapshot()
            tree = descendants(self.pane_pid, parents)
            total = sum(rss.get(p, 0) for p in tree)
            if not self.main_pid:
                direct = [p for p in tree if parents.get(p) == self.pane_pid]
                self.main_pid = direct[0] if direct else 0
            with self._lock:
                self.samples.append((now, total))
                if self.keep_frames:
                    self.frames.append(screen)
                for name, predicate in list(self._pending.items()):
                    if predicate(screen):
                        self.seen[name] = now
                        self.rss_at[name] = total
                        del self._pending[name]
            self._stop.wait(POLL)

    def wait(self, name: str, timeout: float) -> float:
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            with self._lock:
                if name in self.seen:
                    return self.seen[name]
            time.sleep(POLL / 5)
        raise TimeoutError(f"{name} not seen in {timeout:.0f} s; the screen was:\n{self.screen()}")

    def tree_now(self) -> int:
        with self._lock:
            return self.samples[-1][1] if self.samples else 0

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.kill()


@dataclass
class Launch:
    app: str
    anything: float | None = None  # launch → the first frame that is not blank
    paint: float | None = None
    ready: float | None = None
    first: float | None = None
    first_request: float | None = None  # Enter → the answer request at the server
    warm: list[float] = field(default_factory=list)
    warm_request: list[float] = field(default_factory=list)  # Enter → request at the server
    rss_ready: float | None = None  # MiB
    rss_settled: float | None = None
    settled_after: float | None = None  # seconds after ready the settled sample was taken
    peak: float | None = None
    hwm: float | None = None
    note: str = ""


def run_launch(
    app: App,
    n: int,
    scratch: Path,
    server: PeersServer,
    messages: int,
    keep_frames: bool = False,
) -> Launch:
    home = scratch / f"{app.name}-{n}"
    shutil.rmtree(home, ignore_errors=True)
    if app.template is not None:
        shutil.copytree(app.template, home)
    else:
        home.mkdir(parents=True)
    env = {
        k: v.replace("{home}", str(home))
        .replace("{url}", server.url)
        .replace("{hostport}", f"{server.host}:{server.port}")
        for k, v in app.launch_env(home).items()
    }
    result = Launch(app.name)
    watch = Watch(app.name)
    watch.keep_frames = keep_frames
    watch.expect("paint", app.painted)
    watch.expect("anything", lambda screen: bool(screen.strip()))
    if app.ready is not None:
        watch.expect("ready", app.ready)
    started = watch.launch(app.command, env)
    try:
        paint = watch.wait("paint", 90)
        result.paint = paint - started
        result.anything = watch.wait("anything", 1) - started
        due = max(started + FIRST_AFTER_LAUNCH, paint + PAINT_GRACE)
        for i in range(1, messages + 1):
            time.sleep(max(0.0, due - time.perf_counter()))
            if i == 2 and app.name == "sadie":
                # The first message's briefing: "keywords+names" when it ran without vectors.
                status = re.search(r"\d+ chunks · \d+ msgs[^│]*", watch.screen())
                result.note = f"first message: {status.group(0).strip() if status else '?'}"
            word = WORDS[i - 1]
            watch.expect(f"word{i}", lambda s, w=word: re.search(rf"\b{w}\b", s) is not None)
            watch.keys(question(i), literal=True)
            entered = time.perf_counter()
            watch.keys(app.send_key)
            answered = watch.wait(f"word{i}", 60)
            arrived = server.arrival_after(entered)
            if i == 1:
                result.first = answered - entered
                if arrived is not None:
                    result.first_request = arrived - entered
            else:
                result.warm.append(answered - entered)
                if arrived is not None:
                    result.warm_request.append(arrived - entered)
            due = answered + BETWEEN
        ready_name = "ready" if app.ready is not None else "paint"
        ready = watch.wait(ready_name, 90)
        if app.ready is not None:
            result.ready = ready - started
        result.rss_ready = watch.rss_at[ready_name] / 1024
        settle = max(ready + SETTLE, due - BETWEEN + 3.0)
        time.sleep(max(0.0, settle - time.perf_counter()))
        result.rss_settled = watch.tree_now() / 1024
        result.settled_after = time.perf_counter() - ready
        result.hwm = vm_hwm_kib(watch.main_pid) / 1024
        result.peak = max(total for _, total in watch.samples) / 1024
        if keep_frames:
            shown = ""
            for (at, _), frame in zip(watch.samples, watch.frames, strict=False):
                lines = [ln for ln in frame.splitlines() if ln.strip()]
                changed = "\n".join(lines[-3:])
                if changed != shown:
                    print(f"--- {at - started:.2f} s\n{changed}")
                    shown = changed
    finally:
        watch.close()
        time.sleep(0.3)
    return result


# --------------------------------------------------------------------------- setup / main


def installed(pip: list[str], package: str) -> str | None:
    shown = subprocess.run([*pip, "show", package], capture_output=True, text=True)
    version = re.search(r"^Version: (.+)$", shown.stdout, re.M)
    return version.group(1).strip() if version else None


def setup(peers: Iterable[str]) -> int:
    """Venvs for the peers under :func:`peers_root`, from PyPI, never in the project's."""
    for name in peers:
        venv = peers_root() / name
        if not (venv / "bin/python").exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin/python"), "-m", "pip", "--disable-pip-version-check"]
        package, wanted = PEERS[name].split("==")
        if installed(pip, package) != wanted:  # so a second run needs no network
            done = subprocess.run([*pip, "install", "--quiet", PEERS[name]])
            if done.returncode:
                print(f"{name}: pip install {PEERS[name]} failed", file=sys.stderr)
                return done.returncode
        print(f"{name}: {package} {installed(pip, package)} in {venv}")
    return 0


def build_apps(names: Sequence[str], scratch: Path, url: str) -> list[App]:
    cache = Path(os.environ.get("SADIE_BENCH_CACHE", "~/.cache/sadie-bench/sadie")).expanduser()
    makers: dict[str, Callable[[], App]] = {
        "sadie": lambda: sadie_app(scratch, cache),
        "elia": lambda: elia_app(scratch, url),
        "oterm": lambda: oterm_app(scratch),
    }
    apps = []
    for name in names:
        if name in PEERS and not (peers_root() / name / "bin" / name).exists():
            raise SystemExit(f"{name} is not set up: run bench/peers.py --setup first")
        apps.append(makers[name]())
    return apps


def report(launches: list[Launch], apps: Sequence[str], messages: int) -> str:
    def of(attr: str) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        for launch in launches:
            value = getattr(launch, attr)
            values = value if isinstance(value, list) else [value]
            out.setdefault(launch.app, []).extend(v for v in values if v is not None)
        return out

    rows = [
        ("launch → anything on screen", of("anything"), "s", 2),
        ("launch → first paint of the ready screen", of("paint"), "s", 2),
        ("launch → embedding model ready", of("ready"), "s", 2),
        ("first message: Enter → first answer word", of("first"), "s", 2),
        ("first message: Enter → request at the server", of("first_request"), "s", 2),
        (f"warm messages (2–{messages}): Enter → first answer word", of("warm"), "s", 2),
        ("warm messages: Enter → request at the server", of("warm_request"), "s", 2),
        ("RSS when ready (tree)", of("rss_ready"), "MiB", 0),
        (f"RSS ≥ {SETTLE:.0f} s after ready, chat done (tree)", of("rss_settled"), "MiB", 0),
        ("peak RSS, 50 ms samples (tree)", of("peak"), "MiB", 0),
        ("peak RSS, VmHWM of the main process", of("hwm"), "MiB", 0),
    ]
    text = table(rows, apps)
    notes = [launch.note for launch in launches if launch.app == "sadie" and launch.note]
    if notes:
        vector = sum("keywords+names" not in note for note in notes)
        text += (
            f"\n\nsadie's first message used all three channels (vectors too) in {vector} of"
            f" {len(notes)} launches (its status line says 'keywords+names' otherwise)"
        )
    warm = of("warm")
    if warm.get("sadie") and warm.get("elia"):
        diff = statistics.median(warm["sadie"]) - statistics.median(warm["elia"])
        text += f"\n\nsadie − elia, median warm Enter → first answer word: {diff * 1000:+.0f} ms"
    return text


def probe(app: App, scratch: Path, server: PeersServer) -> None:
    print(run_launch(app, 0, scratch, server, 2, keep_frames=True))
    print("server hits:", server.hits)
    for body in server.requests:
        print(json.dumps(body)[:600])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setup", action="store_true", help="install the peers, then stop")
    parser.add_argument("--runs", type=int, default=5, help="launches per app")
    parser.add_argument("--messages", type=int, default=3, help="messages per launch")
    parser.add_argument("--apps", default="sadie,elia,oterm")
    parser.add_argument("--probe", help="launch one app once and show what happened")
    args = parser.parse_args()
    if args.setup:
        return setup(PEERS)
    if shutil.which("tmux") is None:
        print("tmux is not installed", file=sys.stderr)
        return 1
    names = [args.probe] if args.probe else args.apps.split(",")
    scratch = Path(tempfile.mkdtemp(prefix="sadie-peers-"))
    try:
        with PeersServer() as server:
            apps = build_apps(names, scratch, server.url)
            if args.probe:
                probe(apps[0], scratch, server)
                return 0
            return run_all(apps, names, scratch, server, args.runs, args.messages)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run_all(
    apps: Sequence[App],
    names: Sequence[str],
    scratch: Path,
    server: PeersServer,
    runs: int,
    messages: int,
) -> int:
    load = Path("/proc/loadavg").read_text().split()[:3]
    print(
        f"sadie vs peers · tmux {SIZE[0]}×{SIZE[1]} · capture-pane every {POLL * 1000:.0f} ms"
        f" · {runs} launches × {messages} messages, interleaved"
        f" · load average at start {' '.join(load)}",
        flush=True,
    )
    launches: list[Launch] = []
    for n in range(runs):
        for app in apps:
            try:
                launch = run_launch(app, n, scratch, server, messages)
            except TimeoutError as exc:  # one stuck launch should not cost the whole run
                print(f"  {app.name} launch {n + 1} left out: {exc}", flush=True)
                continue
            launches.append(launch)
            print(f"  {launch}", flush=True)
    hits = Counter(f"{method} {path}" for method, path in server.hits)
    streamed = Counter(str(body.get("stream")) for body in server.requests)
    load = Path("/proc/loadavg").read_text().split()[:3]
    print(f"load average at the end {' '.join(load)}")
    print(
        f"requests the server received: {dict(hits)}; 'stream' field of the chat bodies: {dict(streamed)}\n"
    )
    print(report(launches, names, messages))
    return 0


if __name__ == "__main__":
    threading.excepthook = lambda args: None  # the server's threads may outlive a killed client
    sys.exit(main())
