"""Choosing the model server from the settings (``reasoners.choose``), and the settings that
point at an OpenAI-compatible one: base URL, the key's variable, a key refused in the file."""

from __future__ import annotations

import asyncio

import pytest

from sadie_tui.config import OPENAI_URL, load_settings, normalise_base_url
from sadie_tui.engine.errors import ConfigError, ExitCode, UsageError
from sadie_tui.engine.reasoners.choose import (
    backend,
    endpoint,
    list_models,
    make_reasoner,
    model_status,
)
from sadie_tui.engine.reasoners.offline import OfflineReasoner
from sadie_tui.engine.reasoners.ollama import OllamaReasoner
from sadie_tui.engine.reasoners.openai import OpenAIReasoner
from sadie_tui.engine.reasoners.rates import Rates
from tests.support.ollama_server import FakeOllama
from tests.support.openai_server import FakeOpenAI

VARIABLES = (
    "SADIE_MODEL",
    "OLLAMA_HOST",
    "SADIE_REASONER",
    "SADIE_THINK",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "MY_LLM_KEY",
)


@pytest.fixture
def cfg(tmp_path, monkeypatch):
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "config.toml"


# --------------------------------------------------------------------------- settings


def test_openai_settings_from_the_file_and_the_environment(cfg, monkeypatch):
    cfg.write_text(
        'reasoner = "OpenAI"\nopenai_base_url = "http://127.0.0.1:8080/v1/"\n'
        'openai_api_key_env = "MY_LLM_KEY"\nmodel = "qwen2.5"\n'
    )
    s = load_settings(cfg)
    assert (s.reasoner, s.openai_url, s.openai_api_key_env) == (
        "openai",
        "http://127.0.0.1:8080/v1",
        "MY_LLM_KEY",
    )
    assert s.openai_key() is None  # unset: a local server needs none
    monkeypatch.setenv("MY_LLM_KEY", " sk-local ")
    monkeypatch.setenv("OPENAI_API_KEY", "not this one")
    assert s.openai_key() == "sk-local"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://10.0.0.2:1234")
    monkeypatch.setenv("SADIE_REASONER", "openai")
    assert load_settings(cfg).openai_url == "http://10.0.0.2:1234/v1"  # the environment wins


def test_the_default_endpoint_is_the_clients(cfg, monkeypatch):
    s = load_settings(cfg)
    assert s.openai_base_url == "" and s.openai_url == OPENAI_URL
    assert s.openai_api_key_env == "OPENAI_API_KEY"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    assert s.openai_key() == "sk-x"


@pytest.mark.parametrize("line", ['openai_api_key = "sk-secret"', 'api_key = "sk-secret"'])
def test_a_key_in_the_file_is_refused_in_one_line(cfg, line):
    cfg.write_text(line + "\n")
    with pytest.raises(ConfigError) as err:
        load_settings(cfg)
    assert err.value.exit_code == ExitCode.USAGE
    assert "never read from config.toml" in err.value.message
    assert "OPENAI_API_KEY" in (err.value.fix or "")
    assert "sk-secret" not in err.value.one_line()


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ('openai_base_url = "localhost:8080"', "openai_base_url"),
        ('openai_base_url = "ftp://x/v1"', "openai_base_url"),
        ('openai_api_key_env = "my key"', "openai_api_key_env"),
        ('mcp_write = "yes"', "mcp_write"),
    ],
)
def test_a_bad_openai_field_is_named(cfg, line, field):
    cfg.write_text(line + "\n")
    with pytest.raises(ConfigError) as err:
        load_settings(cfg)
    assert field in err.value.message and str(cfg) in err.value.message


@pytest.mark.parametrize(
    ("given", "url"),
    [
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080/v1"),
        ("https://api.example.com/openai/v1/", "https://api.example.com/openai/v1"),
        ("http://[::1]:1234/v1", "http://[::1]:1234/v1"),
    ],
)
def test_base_urls(given, url):
    assert normalise_base_url(given) == url


# --------------------------------------------------------------------------- choosing


@pytest.mark.parametrize(
    ("reasoner", "kind", "cls"),
    [
        ("auto", "ollama", OllamaReasoner),
        ("ollama", "ollama", OllamaReasoner),
        ("openai", "openai", OpenAIReasoner),
        ("offline", "offline", OfflineReasoner),
    ],
)
def test_make_reasoner_follows_the_setting(cfg, monkeypatch, reasoner, kind, cls):
    cfg.write_text(
        f'reasoner = "{reasoner}"\nopenai_base_url = "http://127.0.0.1:8080/v1"\n'
        'openai_api_key_env = "MY_LLM_KEY"\nreply_tokens = 512\nread_timeout = 7\n'
    )
    monkeypatch.setenv("MY_LLM_KEY", "sk-1")
    s = load_settings(cfg)
    rates = Rates()
    made = make_reasoner(s, "llama3:8b", rates)
    assert backend(s) == kind and isinstance(made, cls)
    if cls is OfflineReasoner:
        return
    assert made.model == "llama3:8b" and made.rates is rates
    assert made.reply_tokens == 512 and made.read_timeout == 7.0
    assert made.first_token_timeout == s.first_token_timeout
    if cls is OpenAIReasoner:
        assert (made.base_url, made.api_key, made.key_env) == (
            "http://127.0.0.1:8080/v1",
            "sk-1",
            "MY_LLM_KEY",
        )
        assert endpoint(s) == "http://127.0.0.1:8080/v1"
    else:
        assert made.host == s.ollama_host == endpoint(s)
        assert (made.think, made.keep_alive, made.num_ctx) == (s.think, s.keep_alive, s.num_ctx)


def test_the_configured_model_by_default(cfg, monkeypatch):
    monkeypatch.setenv("SADIE_MODEL", "phi4")
    monkeypatch.setenv("SADIE_REASONER", "openai")
    assert make_reasoner(load_settings(cfg)).model == "phi4"


def test_status_and_models_dispatch_on_the_backend(cfg, monkeypatch):
    with FakeOllama(models=["qwen3:1.7b"]) as ollama, FakeOpenAI(models=["served.gguf"]) as oai:
        monkeypatch.setenv("OLLAMA_HOST", ollama.url)
        monkeypatch.setenv("OPENAI_BASE_URL", oai.url)
        s = load_settings(cfg)
        assert asyncio.run(model_status(s))[0] is True  # auto: Ollama's qwen3:1.7b
        assert [m.name for m in asyncio.run(list_models(s))] == ["qwen3:1.7b"]
        assert not oai.hits
        s.reasoner = "openai"
        assert asyncio.run(model_status(s))[0] is False  # qwen3:1.7b is not served there
        assert asyncio.run(model_status(s, "served.gguf")) == (
            True,
            f"served.gguf at {oai.url}",
            None,
        )
        assert [m.name for m in asyncio.run(list_models(s))] == ["served.gguf"]
        ollama_hits = len(ollama.hits)
        s.reasoner = "offline"
        assert asyncio.run(model_status(s)) == (False, "offline by choice", None)
        assert asyncio.run(list_models(s)) == []
        assert len(ollama.hits) == ollama_hits


# --------------------------------------------------------------------------- doctor


def _doctor(*args: str):  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from sadie_tui.cli import main_group

    return CliRunner().invoke(main_group, ["doctor", "--quick", *args], terminal_width=300)


def _checks(result) -> dict[str, dict]:  # type: ignore[no-untyped-def]
    import json

    return {c["name"]: c for c in json.loads(result.stdout)}


def test_doctor_checks_the_openai_endpoint(tmp_home, monkeypatch):
    monkeypatch.setenv("SADIE_REASONER", "openai")
    monkeypatch.setenv("MY_LLM_KEY", "sk-secret")
    (tmp_home.parent / "config").mkdir()
    (tmp_home.parent / "config" / "config.toml").write_text('openai_api_key_env = "MY_LLM_KEY"\n')
    with FakeOpenAI(models=["qwen3:1.7b", "other"], key="sk-secret") as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        result = _doctor()
        as_json = _checks(_doctor("--json"))
        assert ("GET", "/v1/models") in srv.hits
    assert result.exit_code == 0, result.output
    assert "ollama" not in as_json and "sk-secret" not in result.stdout
    assert as_json["openai endpoint"]["status"] == "ok"
    assert as_json["openai endpoint"]["detail"] == f"{srv.url} (2 models, key from MY_LLM_KEY)"
    assert as_json["model"] == {
        "name": "model",
        "status": "ok",
        "detail": "qwen3:1.7b is served",
        "fix": None,
    }
    assert "✓ openai endpoint: " in result.stdout


def test_doctor_names_a_model_the_endpoint_does_not_serve(tmp_home, monkeypatch):
    monkeypatch.setenv("SADIE_REASONER", "openai")
    monkeypatch.setenv("SADIE_MODEL", "qwen3:4b")
    with FakeOpenAI(models=["qwen3:1.7b"]) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        result = _doctor("--json")
    assert result.exit_code == 1
    model = _checks(result)["model"]
    assert (model["status"], model["detail"]) == (
        "fail",
        "qwen3:4b is not served (it serves qwen3:1.7b)",
    )
    assert "SADIE_MODEL" in model["fix"]
    assert _checks(result)["openai endpoint"]["detail"].endswith(
        "(1 model, no key in OPENAI_API_KEY)"
    )


def test_doctor_with_the_endpoint_away_warns_and_a_missing_key_fails(tmp_home, monkeypatch):
    monkeypatch.setenv("SADIE_REASONER", "openai")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    away = _checks(_doctor("--json"))
    assert away["openai endpoint"]["status"] == "warn"
    assert (
        away["openai endpoint"]["detail"]
        == "the model server is not reachable at http://127.0.0.1:9/v1"
    )
    assert away["model"]["status"] == "warn"
    with FakeOpenAI(key="right") as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        refused = _doctor("--json")
    assert refused.exit_code == 1
    check = _checks(refused)["openai endpoint"]
    assert check["status"] == "fail" and check["fix"] == "set OPENAI_API_KEY"
    assert check["detail"] == f"the model server at {srv.url} wants an API key (401)"


# --------------------------------------------------------------------------- the declarations


def test_every_reasoner_setting_names_a_declared_kind(cfg, monkeypatch) -> None:
    from sadie_tui.config import REASONERS
    from sadie_tui.engine.reasoners.kinds import KINDS, OLLAMA, kind_of

    assert set(KINDS) == set(REASONERS) - {"auto"}  # auto is Ollama, offline its fallback
    for name in REASONERS:
        monkeypatch.setenv("SADIE_REASONER", name)
        kind = kind_of(load_settings(cfg))
        assert kind is (OLLAMA if name == "auto" else KINDS[name])
    assert [k.name for k in KINDS.values() if not k.server] == ["offline"]


def test_a_kind_declared_once_is_served_by_every_choice(cfg, monkeypatch) -> None:
    """The choices read the declaration, never the kind's name: a kind added to the table is
    made, asked, listed and located by it alone."""
    import dataclasses

    from sadie_tui.engine.reasoners import kinds
    from sadie_tui.engine.reasoners.choose import server_source, use_server
    from sadie_tui.engine.reasoners.ollama import ModelInfo

    made = OfflineReasoner("the scripted kind")

    async def status(s, model, timeout):  # type: ignore[no-untyped-def]
        return True, f"{model} answers", None

    async def models(s):  # type: ignore[no-untyped-def]
        return [ModelInfo("scripted-1")]

    scripted = dataclasses.replace(
        kinds.OPENAI,
        name="ollama",  # stands in for Ollama's entry: Settings accepts no other name
        reasoner=lambda s, model, rates: made,
        status=status,
        models=models,
        address=lambda s: "http://scripted.invalid",
    )
    monkeypatch.setitem(kinds.KINDS, "ollama", scripted)
    monkeypatch.setenv("SADIE_REASONER", "ollama")
    s = load_settings(cfg)
    assert make_reasoner(s) is made
    assert asyncio.run(model_status(s, "m")) == (True, "m answers", None)
    assert [m.name for m in asyncio.run(list_models(s))] == ["scripted-1"]
    assert endpoint(s) == "http://scripted.invalid"
    source = server_source(s)
    assert (source.setting, source.variable) == ("openai_base_url", "OPENAI_BASE_URL")
    assert use_server(s, "http://127.0.0.1:8080/v1/").setting == "openai_base_url"
    assert s.openai_url == "http://127.0.0.1:8080/v1"

    monkeypatch.setitem(kinds.KINDS, "ollama", dataclasses.replace(scripted, server=False))
    with pytest.raises(UsageError, match="no model server to set"):
        use_server(s, "http://127.0.0.1:1")
