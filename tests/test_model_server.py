"""Which model server address wins, and saying so (issue 28, item 6): the server moved to a
new port, config.toml says the new one, OLLAMA_HOST still says the old one. The settings
remember where each value came from, an address set in the app wins for its run, and
``sadie doctor`` names the address it checks, where it came from, and the disagreement. The
app's probe schedule runs on a clock the test moves."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from sadie_tui.cli import main_group
from sadie_tui.config import load_settings, save_setting
from sadie_tui.engine.errors import ConfigError, UsageError
from sadie_tui.engine.reasoners.choose import server_source, use_server
from sadie_tui.tui.probe import OFFLINE_EVERY, ONLINE_EVERY, Prober
from tests.support.ollama_server import FakeOllama

OLD = "http://127.0.0.1:9"  # where the server was (closed now)


def config_at(tmp_home: Path, text: str) -> Path:
    path = Path(os.environ["SADIE_CONFIG"]) / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_each_source_is_named_and_a_disagreement_said(tmp_home, monkeypatch) -> None:
    path = config_at(tmp_home, 'ollama_host = "http://127.0.0.1:11500"\n')
    monkeypatch.delenv("OLLAMA_HOST")
    assert server_source(load_settings(path)).describe() == (
        "http://127.0.0.1:11500 (from config.toml)"
    )
    path.write_text("")
    assert server_source(load_settings(path)).describe() == ("http://127.0.0.1:11434 (the default)")
    path.write_text('ollama_host = "http://127.0.0.1:11500"\n')
    monkeypatch.setenv("OLLAMA_HOST", OLD)
    source = server_source(load_settings(path))
    assert source.describe() == f"{OLD} (from OLLAMA_HOST in the environment)"
    assert source.conflict == (
        "config.toml says http://127.0.0.1:11500, and OLLAMA_HOST in the environment wins over it"
    )
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:11500")  # the same address, written short
    assert server_source(load_settings(path)).conflict == ""


def test_an_address_set_in_the_app_wins_for_its_run(tmp_home, monkeypatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", OLD)
    settings = load_settings(config_at(tmp_home, ""))
    source = use_server(settings, "127.0.0.1:11500")
    assert settings.ollama_host == "http://127.0.0.1:11500"
    assert source.describe() == "http://127.0.0.1:11500 (set in the app)"
    assert source.conflict == (
        f"OLLAMA_HOST={OLD} in the environment wins again at the next launch"
        " (unset it to keep http://127.0.0.1:11500)"
    )
    with pytest.raises(ConfigError):
        use_server(settings, "ftp://nowhere")
    assert settings.ollama_host == "http://127.0.0.1:11500"  # a bad one changes nothing


def test_the_openai_endpoint_gets_the_same_treatment(tmp_home, monkeypatch) -> None:
    path = config_at(tmp_home, 'reasoner = "openai"\nopenai_base_url = "http://127.0.0.1:8080"\n')
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8081/v1")
    source = server_source(load_settings(path))
    assert source.variable == "OPENAI_BASE_URL" and source.setting == "openai_base_url"
    assert source.conflict.startswith("config.toml says http://127.0.0.1:8080/v1")
    settings = load_settings(path)
    assert use_server(settings, "http://127.0.0.1:8082").address == "http://127.0.0.1:8082/v1"
    assert settings.openai_base_url == "http://127.0.0.1:8082/v1"
    offline = load_settings(config_at(tmp_home, 'reasoner = "offline"\n'))
    with pytest.raises(UsageError):
        use_server(offline, "http://127.0.0.1:11500")


def test_saving_the_address_keeps_the_files_comments(tmp_home, monkeypatch) -> None:
    monkeypatch.delenv("OLLAMA_HOST")
    path = config_at(tmp_home, '# my sadie\nmodel = "qwen3:1.7b"  # the small one\n')
    save_setting("ollama_host", "http://127.0.0.1:11500", path)
    text = path.read_text()
    assert "# my sadie" in text and "# the small one" in text
    assert load_settings(path).ollama_host == "http://127.0.0.1:11500"


def _doctor() -> dict[str, str]:
    result = CliRunner().invoke(main_group, ["doctor", "--quick"], terminal_width=400)
    lines = {}
    for line in result.stdout.splitlines():
        if len(line) > 2 and line[0] in "✓!✗" and ":" in line:
            lines[line[2:].split(":", 1)[0]] = line
    return lines


def test_doctor_says_which_address_it_checks_and_that_config_toml_lost(
    tmp_home, monkeypatch
) -> None:
    with FakeOllama() as moved:  # the server, on its new port
        config_at(tmp_home, f'ollama_host = "{moved.url}"\n')
        lines = _doctor()  # OLLAMA_HOST still names the old port (tmp_home sets it)
        assert lines["model server"] == (
            f"! model server: {OLD} (from OLLAMA_HOST in the environment); config.toml says"
            f" {moved.url}, and OLLAMA_HOST in the environment wins over it → unset"
            " OLLAMA_HOST, or make it and `ollama_host` in config.toml agree"
        )
        assert lines["ollama"].startswith(f"! ollama: not reachable at {OLD}")
        monkeypatch.delenv("OLLAMA_HOST")
        lines = _doctor()
        assert lines["model server"] == f"✓ model server: {moved.url} (from config.toml)"
        assert lines["ollama"].startswith(f"✓ ollama: {moved.url}")
        assert ("GET", "/api/tags") in moved.hits


def test_the_probe_comes_soon_after_a_failure_later_after_success_never_mid_reply() -> None:
    now = [100.0]
    prober = Prober(clock=lambda: now[0])
    assert prober.due()
    prober.asked()
    assert not prober.due()  # waiting for its answer
    prober.checked(True)
    now[0] += ONLINE_EVERY - 0.1
    assert not prober.due()
    now[0] += 0.1
    assert prober.due() and not prober.due(busy=True)
    prober.asked()
    prober.checked(False)
    now[0] += OFFLINE_EVERY
    assert prober.due()
    assert OFFLINE_EVERY < ONLINE_EVERY <= 5.0  # going away is noticed within seconds
    prober.asked()  # an answer that never comes (cancelled): asked again after a while
    now[0] += 10.0
    assert prober.due()
