"""Settings are parsed and validated in one place: field-level errors, the environment over
the file, and a config writer that keeps the rest of the file."""

from __future__ import annotations

import tomllib

import pytest

from sadie_tui.config import load_settings, normalise_host, save_setting
from sadie_tui.engine.errors import ConfigError, ExitCode


@pytest.fixture
def cfg(tmp_path, monkeypatch):
    for name in ("SADIE_MODEL", "OLLAMA_HOST", "SADIE_REASONER", "SADIE_THINK"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "config.toml"


def test_defaults_and_values(cfg):
    cfg.write_text('model = "llama3:8b"\nread_timeout = 5\nreply_tokens = 256\nreasoner = "Offline"\n')
    s = load_settings(cfg)
    assert (s.model, s.read_timeout, s.reply_tokens, s.reasoner) == ("llama3:8b", 5.0, 256, "offline")
    assert s.citation_pass_timeout == 300.0 and s.first_token_timeout == 900.0
    assert (s.think, s.keep_alive, s.num_ctx) == ("auto", "30m", 8192)
    assert s.reflect_when_idle is False
    assert s.reflect_idle_minutes == 10.0
    cfg.write_text("reflect_when_idle = true\nreflect_idle_minutes = 2.5\n")
    idle = load_settings(cfg)
    assert (idle.reflect_when_idle, idle.reflect_idle_minutes) == (True, 2.5)


def test_think_keep_alive_and_num_ctx(cfg, monkeypatch):
    cfg.write_text('think = false\nkeep_alive = 600\nnum_ctx = 16384\n')
    s = load_settings(cfg)
    assert (s.think, s.keep_alive, s.num_ctx) == ("off", "600s", 16384)
    cfg.write_text('think = "ON"\nkeep_alive = "2h"\n')
    assert (load_settings(cfg).think, load_settings(cfg).keep_alive) == ("on", "2h")
    monkeypatch.setenv("SADIE_THINK", "off")
    assert load_settings(cfg).think == "off"


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ('read_timeout = "fast"', "read_timeout"),
        ("read_timeout = -1", "read_timeout"),
        ("read_timeout = nan", "read_timeout"),
        ("citation_pass_timeout = true", "citation_pass_timeout"),
        ("reply_tokens = 1.5", "reply_tokens"),
        ("reply_tokens = 99999999999", "reply_tokens"),
        ('reasoner = "gpt"', "reasoner"),
        ('think = "maybe"', "think"),
        ('keep_alive = "forever"', "keep_alive"),
        ("num_ctx = 100", "num_ctx"),
        ("model = 3", "model"),
        ('ollama_host = "127.0.0.1:abc"', "ollama_host"),
        ("keys = 3", "[keys]"),
        ('reflect_when_idle = "yes"', "reflect_when_idle"),
        ("reflect_idle_minutes = 0", "reflect_idle_minutes"),
        ('reflect_idle_minutes = "10m"', "reflect_idle_minutes"),
    ],
)
def test_a_bad_field_is_named(cfg, line, field):
    cfg.write_text(line + "\n")
    with pytest.raises(ConfigError) as err:
        load_settings(cfg)
    assert field in err.value.message and str(cfg) in err.value.message
    assert err.value.exit_code == ExitCode.USAGE


def test_a_bad_ollama_host_in_the_environment_is_named(cfg, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:abc")
    with pytest.raises(ConfigError) as err:
        load_settings(cfg)
    assert err.value.message.startswith("OLLAMA_HOST: ") and err.value.message.count("OLLAMA") == 1


def test_environment_wins_and_is_checked(cfg, monkeypatch):
    cfg.write_text('model = "a:1"\nreasoner = "ollama"\n')
    monkeypatch.setenv("SADIE_MODEL", "b:2")
    monkeypatch.setenv("SADIE_REASONER", "offline")
    s = load_settings(cfg)
    assert (s.model, s.reasoner) == ("b:2", "offline")
    monkeypatch.setenv("SADIE_REASONER", "sometimes")
    with pytest.raises(ConfigError, match="SADIE_REASONER"):
        load_settings(cfg)


@pytest.mark.parametrize("bad", ["127.0.0.1:abc", "127.0.0.1:99999", "http://[bad", "ftp://x:1"])
def test_bad_ollama_host(bad):
    with pytest.raises(ConfigError, match="not a host"):
        normalise_host(bad)


@pytest.mark.parametrize(
    ("given", "url"),
    [
        ("localhost", "http://localhost:11434"),
        ("127.0.0.1:11555", "http://127.0.0.1:11555"),
        ("https://ollama.example:443/", "https://ollama.example:443"),
        ("[::1]:8080", "http://[::1]:8080"),
    ],
)
def test_good_ollama_host(given, url):
    assert normalise_host(given) == url


def test_save_setting_keeps_the_file_and_quotes_any_value(cfg):
    cfg.write_text('# my settings\nmodel = "x:1"  # the small one\n\n[keys]\nsend = "ctrl+s"\n')
    save_setting("theme", 'odd "name" \\ with ünïcode', cfg)
    save_setting("chat_persona", "coach", cfg)
    text = cfg.read_text()
    assert text.startswith("# my settings\n") and "# the small one" in text
    data = tomllib.loads(text)
    assert data["theme"] == 'odd "name" \\ with ünïcode'
    assert data["chat_persona"] == "coach" and data["keys"] == {"send": "ctrl+s"}
    save_setting("theme", "plain", cfg)
    assert tomllib.loads(cfg.read_text())["theme"] == "plain"
    with pytest.raises(ConfigError):
        save_setting("not_a_setting", "x", cfg)


# --------------------------------------------------------------------------- the declarations


def test_the_readme_holds_the_settings_table_generated_from_the_declarations() -> None:
    from pathlib import Path

    from sadie_tui.config import reference

    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    start = readme.index("<!-- settings: generated by sadie_tui.config.reference -->\n")
    end = readme.index("<!-- /settings -->", start)
    held = readme[readme.index("\n", start) + 1 : end]
    assert held == reference(), "regenerate the README's table:\n" + reference()


def test_every_declared_setting_is_checked_in_the_file(cfg) -> None:
    """Validation comes from the declarations: every key, given a value of no type it takes
    (an inline table), is refused with its name and the file's."""
    from sadie_tui.config import declared

    for name, setting in declared().items():
        key = setting.key or name
        cfg.write_text(f"{key} = {{ nested = 1 }}\n")
        with pytest.raises(ConfigError) as err:
            load_settings(cfg)
        assert err.value.message.startswith(f"{cfg}: "), name
        assert (f"[{key}]" if setting.key else key) in err.value.message, name


GOOD_FROM_THE_ENVIRONMENT = {
    "SADIE_MODEL": ("model", "m:1"),
    "OLLAMA_HOST": ("ollama_host", "127.0.0.1:1"),
    "SADIE_REASONER": ("reasoner", "offline"),
    "SADIE_THINK": ("think", "off"),
    "OPENAI_BASE_URL": ("openai_base_url", "http://127.0.0.1:8080/v1"),
}


def test_the_declared_variables_override_the_file_and_say_so(cfg, monkeypatch) -> None:
    from sadie_tui.config import declared, variable_for

    assert {s.env: n for n, s in declared().items() if s.env} == {
        variable: name for variable, (name, _) in GOOD_FROM_THE_ENVIRONMENT.items()
    }
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    cfg.write_text('model = "from:file"\nreasoner = "ollama"\n')
    for variable, (name, value) in GOOD_FROM_THE_ENVIRONMENT.items():
        monkeypatch.setenv(variable, value)
        s = load_settings(cfg)
        assert s.origin(name) == variable and variable_for(name) == variable
    s = load_settings(cfg)
    assert s.file_values == {"model": "from:file", "reasoner": "ollama"}
    assert variable_for("theme") is None


def test_only_a_declared_top_level_setting_is_saved(cfg) -> None:
    for key in ("origins", "config_path", "keymap", "file_values"):
        with pytest.raises(ConfigError, match="unknown setting"):
            save_setting(key, "x", cfg)
    assert not cfg.exists()


def test_keys_are_read_from_keys_or_keymap(cfg) -> None:
    cfg.write_text('[keys]\nsend = "ctrl+s"\n')
    assert load_settings(cfg).keymap == {"send": "ctrl+s"}
    cfg.write_text('keymap = { help = "f9" }\n')
    assert load_settings(cfg).keymap == {"help": "f9"}
