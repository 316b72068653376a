"""The only place that reads the environment and `codecite.toml`.

Secrets and switches come from the environment (names fixed by the design);
repositories, channel scopes, admins, schedules and limits come from the TOML
file named by `CODECITE_CONFIG` (or `codecite.toml` in the data directory).
Everything is validated once, at start. A chat platform's own settings (its
tokens, its own table) live in its adapter: `adapters/<platform>/settings.py`.
"""

from __future__ import annotations

import tomllib
from collections.abc import Collection, Mapping
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
)
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.errors import ConfigError

DEFAULT_CHAT_MODEL = "gpt-4o-mini"
DEFAULT_EMBED_MODEL = "text-embedding-3-small"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RepoConfig(_Strict):
    """One repository the bot indexes: a git URL or a local path."""

    name: str
    url: str = ""
    path: str = ""
    branch: str = ""
    include: tuple[str, ...] = ()  # glob patterns; empty = everything
    exclude: tuple[str, ...] = ()
    schedule: str = ""  # "15m", "1h", or a 5-field cron line; "" = the default
    # How far back history is recorded (bot.ingest.history): None = the default horizon.
    history_commits: int | None = Field(default=None, ge=0)
    history_days: int | None = Field(default=None, ge=0)
    history: bool = True  # False: record no commits for this repository

    @property
    def location(self) -> str:
        return self.url or self.path


class ChannelConfig(_Strict):
    repos: tuple[str, ...]
    threads: bool = True  # answer follow-ups in a thread the bot answered
    reply_in_thread: bool = False  # Discord: answer mentions in a new thread


class ScheduleConfig(_Strict):
    interval: str = "15m"
    jitter_seconds: int = 60
    timezone: str = "UTC"


class LimitsConfig(_Strict):
    max_question_chars: int = 12_000
    per_user_per_minute: int = 6
    per_channel_per_minute: int = 30
    daily_answers: int = 2000
    queue_size: int = 32
    workers: int = 4


class FileConfig(_Strict):
    """The contents of codecite.toml."""

    repos: tuple[RepoConfig, ...] = ()
    channels: dict[str, ChannelConfig] = Field(default_factory=dict)
    default_scope: tuple[str, ...] | None = None  # None = every indexed repository
    admins: tuple[str, ...] = ()
    dm_allowlist: tuple[str, ...] | None = None  # None = DMs allowed for everyone
    answer_bots: bool = False
    schedule: ScheduleConfig = ScheduleConfig()
    limits: LimitsConfig = LimitsConfig()
    # Tables that belong to a chat platform kept unparsed for its adapter.
    _platforms: dict[str, dict[str, Any]] = PrivateAttr(default_factory=dict)

    def repo(self, name: str) -> RepoConfig | None:
        return next((r for r in self.repos if r.name == name), None)

    def platform_section(self, name: str) -> dict[str, Any]:
        """A platform's table as written in codecite.toml; {} when there is none."""
        return dict(self._platforms.get(name, {}))

    def with_platform_sections(self, sections: Mapping[str, dict[str, Any]]) -> FileConfig:
        config = self.model_copy()
        config._platforms = {name: dict(table) for name, table in sections.items()}
        return config


def _env(*names: str) -> AliasChoices:
    return AliasChoices(*names)


class Settings(BaseSettings):
    """Environment settings. Field names are ours; the variable names are the interface."""

    # An empty variable (`CODECITE_HOME=`) means unset, not "the current directory".
    model_config = SettingsConfigDict(extra="ignore", frozen=True, env_ignore_empty=True)

    home: Annotated[Path, Field(validation_alias=_env("CODECITE_HOME"))] = Path.home() / ".codecite"
    config_path: Annotated[Path | None, Field(validation_alias=_env("CODECITE_CONFIG"))] = None
    index: Annotated[
        Literal["local", "pinecone"], Field(validation_alias=_env("CODECITE_INDEX"))
    ] = "local"
    openai_api_key: Annotated[SecretStr | None, Field(validation_alias=_env("OPENAI_API_KEY"))] = (
        None
    )
    openai_base_url: Annotated[str | None, Field(validation_alias=_env("OPENAI_BASE_URL"))] = None
    chat_model: Annotated[str, Field(validation_alias=_env("CODECITE_CHAT_MODEL"))] = (
        DEFAULT_CHAT_MODEL
    )
    embed_model: Annotated[str, Field(validation_alias=_env("CODECITE_EMBED_MODEL"))] = (
        DEFAULT_EMBED_MODEL
    )
    embed_dimensions: Annotated[
        int | None, Field(validation_alias=_env("CODECITE_EMBED_DIMENSIONS"))
    ] = None
    pinecone_api_key: Annotated[
        SecretStr | None, Field(validation_alias=_env("PINECONE_API_KEY"))
    ] = None
    pinecone_index: Annotated[str, Field(validation_alias=_env("PINECONE_INDEX"))] = "codecite"
    pinecone_host: Annotated[str | None, Field(validation_alias=_env("PINECONE_HOST"))] = None
    pinecone_timeout: Annotated[
        float, Field(validation_alias=_env("CODECITE_PINECONE_TIMEOUT"), gt=0)
    ] = 30.0
    github_token: Annotated[SecretStr | None, Field(validation_alias=_env("GITHUB_TOKEN"))] = None
    github_api_url: Annotated[str, Field(validation_alias=_env("CODECITE_GITHUB_API_URL"))] = (
        "https://api.github.com"
    )
    webhook_secret: Annotated[
        SecretStr | None, Field(validation_alias=_env("CODECITE_WEBHOOK_SECRET"))
    ] = None
    port: Annotated[int | None, Field(validation_alias=_env("PORT"), gt=0, lt=65536)] = None
    # The shared store (PostgreSQL); a secret: never logged or shown (see bot.store.postgres).
    database_url: Annotated[
        SecretStr | None, Field(validation_alias=_env("CODECITE_DATABASE_URL", "DATABASE_URL"))
    ] = None
    embedding_cache_max: Annotated[
        int, Field(validation_alias=_env("CODECITE_EMBEDDING_CACHE_MAX"), ge=1)
    ] = 500_000  # vectors kept; bot.store.embeddings.DEFAULT_MAX_ENTRIES
    webhook_port: Annotated[
        int, Field(validation_alias=_env("CODECITE_WEBHOOK_PORT"), ge=0, le=65535)
    ] = 8787
    # Re-ingest jobs (bot.jobs): a runner silent this long has died and its job is retaken;
    # runners and waiters look at the job table this often.
    job_lease_seconds: Annotated[
        float, Field(validation_alias=_env("CODECITE_JOB_LEASE_SECONDS"), gt=0)
    ] = 60.0
    job_poll_seconds: Annotated[
        float, Field(validation_alias=_env("CODECITE_JOB_POLL_SECONDS"), gt=0, le=60)
    ] = 1.0

    # Retrieval and answer knobs (defaults chosen on the development split).
    file_weight: Annotated[
        float, Field(validation_alias=_env("CODECITE_FILE_WEIGHT"), ge=0, le=1)
    ] = 0.35
    context_tokens: Annotated[
        int, Field(validation_alias=_env("CODECITE_CONTEXT_TOKENS"), ge=500)
    ] = 6000
    answer_max_tokens: Annotated[
        int, Field(validation_alias=_env("CODECITE_ANSWER_MAX_TOKENS"), ge=50)
    ] = 900
    hybrid_alpha: Annotated[
        float, Field(validation_alias=_env("CODECITE_HYBRID_ALPHA"), ge=0, le=1)
    ] = 0.5
    hyde: Annotated[bool, Field(validation_alias=_env("CODECITE_HYDE"))] = False
    prune: Annotated[bool, Field(validation_alias=_env("CODECITE_PRUNE"))] = False
    # Chat adapters show a model's answer as it is written; off: posted once, complete.
    stream_answers: Annotated[bool, Field(validation_alias=_env("CODECITE_STREAM"))] = True
    prune_model: Annotated[str, Field(validation_alias=_env("CODECITE_PRUNE_MODEL"))] = (
        DEFAULT_CHAT_MODEL
    )
    max_file_bytes: Annotated[
        int, Field(validation_alias=_env("CODECITE_MAX_FILE_BYTES"), ge=1024)
    ] = 1_000_000
    # Processes that parse, chunk and count terms during an ingest; unset: one per core.
    ingest_workers: Annotated[
        int | None, Field(validation_alias=_env("CODECITE_INGEST_WORKERS"), ge=1, le=64)
    ] = None
    llm_timeout: Annotated[float, Field(validation_alias=_env("CODECITE_LLM_TIMEOUT"), gt=0)] = 60.0
    # Seconds the answers under way get at SIGTERM (the platforms kill at 30).
    shutdown_grace: Annotated[
        float, Field(validation_alias=_env("CODECITE_SHUTDOWN_GRACE"), ge=0, le=300)
    ] = 25.0
    # How long /readyz keeps a result: probes come every few seconds, from several places.
    ready_cache_seconds: Annotated[
        float, Field(validation_alias=_env("CODECITE_READY_CACHE_SECONDS"), ge=0, le=60)
    ] = 5.0

    @property
    def llm_configured(self) -> bool:
        return self.openai_api_key is not None or bool(self.openai_base_url)

    @property
    def embeddings_configured(self) -> bool:
        return self.llm_configured and self.embed_model.lower() != "none"

    @property
    def index_path(self) -> Path:
        return self.home / "index.sqlite"

    @property
    def clones_dir(self) -> Path:
        return self.home / "repos"

    @property
    def database(self) -> str | None:
        """The database URL when one is set (None: the data directory's SQLite files)."""
        url = self.database_url.get_secret_value().strip() if self.database_url else ""
        return url or None

    def resolved_config_path(self) -> Path | None:
        if self.config_path is not None:
            return self.config_path
        candidate = self.home / "codecite.toml"
        return candidate if candidate.exists() else None


def load_settings() -> Settings:
    try:
        return Settings()
    except ValidationError as exc:
        raise settings_error(exc, Settings) from exc


def settings_error(exc: ValidationError, model: type[BaseSettings]) -> ConfigError:
    """One line naming each bad variable, its value (never a secret's) and what is valid:
    `CODECITE_FILE_WEIGHT=2 is not valid: use a number in 0..1.`"""
    by_name = {
        name: field
        for field in model.model_fields.values()
        if isinstance(field.validation_alias, AliasChoices)
        for name in field.validation_alias.choices
        if isinstance(name, str)
    }
    problems = []
    for error in exc.errors():
        name = str(error["loc"][0]) if error.get("loc") else "?"
        field = by_name.get(name)
        if field is None:
            problems.append(f"{name} is not valid")
            continue
        secret = "SecretStr" in str(field.annotation)
        value = "" if secret else f"={str(error.get('input', ''))[:40]}"
        problems.append(f"{name}{value} is not valid: use {valid_values(field)}")
    return ConfigError("; ".join(problems) + ".")


def valid_values(field: FieldInfo) -> str:
    """What a setting accepts, in words: `a number in 0..1`, `one of local, pinecone`."""
    kind = field.annotation
    present = [a for a in get_args(kind) if a is not type(None)]
    if get_origin(kind) in (Union, UnionType) and len(present) == 1:
        kind = present[0]  # `int | None`: unset is allowed; a value that is set must be an int
    if get_origin(kind) is Literal:
        return "one of " + ", ".join(str(a) for a in get_args(kind))
    if kind is bool:
        return "true or false (or 1/0, yes/no, on/off)"
    if kind not in (int, float):
        return "text"
    whole = kind is int
    limits: dict[str, Any] = {
        name: getattr(rule, name)
        for rule in field.metadata
        for name in ("ge", "gt", "le", "lt")
        if hasattr(rule, name)
    }
    if whole:  # a whole number above 0 is one of at least 1
        if "gt" in limits:
            limits["ge"] = limits.pop("gt") + 1
        if "lt" in limits:
            limits["le"] = limits.pop("lt") - 1
    noun = "a whole number" if whole else "a number"
    low, high = limits.get("ge"), limits.get("le")
    if low is not None and high is not None:
        return f"{noun} in {_num(low)}..{_num(high)}"
    said = {"ge": "of at least", "gt": "above", "le": "at most", "lt": "below"}
    bounds = [f"{said[name]} {_num(limits[name])}" for name in said if name in limits]
    return " ".join([noun, " and ".join(bounds)]).strip()


def _num(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def load_file_config(path: Path | None, platform_sections: Collection[str] = ()) -> FileConfig:
    """Read codecite.toml; no file means the defaults (every repository in scope everywhere).

    `platform_sections` names the tables the chat adapters of this install read
    (`[<platform>]`): each is kept unparsed for its adapter, which validates it
    strictly when it starts. Any other unknown key is an error, so a typo
    (`[discrod]`, `admin = [...]`) is caught here, at start.
    """
    if path is None:
        return FileConfig()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"Config file not found: {path}") from exc
    except IsADirectoryError as exc:  # what a container engine mounts for a missing file
        raise ConfigError(
            f"Config file {path} is a directory, not a file: write codecite.toml there."
        ) from exc
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"Config file {path} is not valid TOML: {exc}") from exc
    channels = data.get("channels", {})
    if isinstance(channels, dict):
        # `"C123" = ["repo"]` is shorthand for `[channels.C123] repos = ["repo"]`.
        data["channels"] = {
            k: {"repos": v} if isinstance(v, list) else v for k, v in channels.items()
        }
    sections: dict[str, dict[str, Any]] = {}
    for name in platform_sections:
        table = data.pop(name, None)
        if table is None:
            continue
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: {name}: must be a table ([{name}])")
        sections[name] = table
    try:
        config = FileConfig.model_validate(data).with_platform_sections(sections)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise ConfigError(f"{path}: {where}: {first.get('msg', 'invalid')}") from exc
    names = [r.name for r in config.repos]
    if len(names) != len(set(names)):
        raise ConfigError(f"{path}: repository names must be unique")
    for repo in config.repos:
        if bool(repo.url) == bool(repo.path):
            raise ConfigError(f"{path}: repository {repo.name!r} needs exactly one of url or path")
    return config
