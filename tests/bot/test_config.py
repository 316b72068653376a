"""A bad environment setting is one line naming the variable, its value and what is valid."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import pytest
from pydantic import AliasChoices, Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings

from bot.config import Settings, load_settings, settings_error, valid_values
from bot.errors import ConfigError


def _alias(name: str) -> str:
    alias = Settings.model_fields[name].validation_alias
    assert isinstance(alias, AliasChoices)
    return str(alias.choices[0])


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("CODECITE_FILE_WEIGHT", "2", "CODECITE_FILE_WEIGHT=2 is not valid: use a number in 0..1."),
        ("CODECITE_HYBRID_ALPHA", "-0.5", "use a number in 0..1."),
        (
            "CODECITE_INDEX",
            "sqlite",
            "CODECITE_INDEX=sqlite is not valid: use one of local, pinecone.",
        ),
        ("PORT", "0", "PORT=0 is not valid: use a whole number in 1..65535."),
        ("PORT", "http", "PORT=http is not valid: use a whole number in 1..65535."),
        ("CODECITE_CONTEXT_TOKENS", "10", "use a whole number of at least 500."),
        ("CODECITE_LLM_TIMEOUT", "0", "CODECITE_LLM_TIMEOUT=0 is not valid: use a number above 0."),
        ("CODECITE_JOB_POLL_SECONDS", "61", "use a number above 0 and at most 60."),
        ("CODECITE_STREAM", "maybe", "use true or false (or 1/0, yes/no, on/off)."),
        ("CODECITE_EMBED_DIMENSIONS", "many", "use a whole number."),
    ],
)
def test_the_message_says_what_is_valid(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, message: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert info.value.user_message.endswith(message)
    assert "\n" not in info.value.user_message


def test_every_bounded_setting_names_its_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each number the environment sets, pushed past its limit, gets a sentence with it."""
    checked = 0
    for name, field in Settings.model_fields.items():
        limits = {
            k: getattr(m, k)
            for m in field.metadata
            for k in ("ge", "gt", "le", "lt")
            if hasattr(m, k)
        }
        if not limits:
            continue
        past = {"le": lambda v: v + 1, "lt": lambda v: v, "ge": lambda v: v - 1, "gt": lambda v: v}
        bad = next(past[k](limits[k]) for k in past if k in limits)
        variable = _alias(name)
        monkeypatch.setenv(variable, str(bad))
        with pytest.raises(ConfigError) as info:
            load_settings()
        monkeypatch.delenv(variable)
        said = info.value.user_message
        assert said.startswith(f"{variable}={bad} is not valid: use a "), said
        assert any(str(v).rstrip("0").rstrip(".") in said for v in limits.values()), said
        checked += 1
    assert checked >= 10


def test_a_secret_is_named_but_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    class Secretive(BaseSettings):
        key: Annotated[SecretStr, Field(validation_alias=AliasChoices("SOME_KEY"), min_length=40)]

    monkeypatch.setenv("SOME_KEY", "sk-live-short-but-real")
    with pytest.raises(ValidationError) as info:
        Secretive()
    said = settings_error(info.value, Secretive).user_message
    assert said == "SOME_KEY is not valid: use text."
    assert "sk-live" not in said


def test_valid_values_of_an_unbounded_field() -> None:
    assert valid_values(Settings.model_fields["chat_model"]) == "text"


def test_an_empty_variable_means_unset(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # `CODECITE_HOME=` once wrote the index into whatever directory codecite ran from.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CODECITE_HOME", "")
    monkeypatch.setenv("CODECITE_INDEX", "")
    settings = load_settings()
    assert settings.home == Settings.model_fields["home"].default
    assert settings.home != Path(".")
    assert settings.index == "local"
