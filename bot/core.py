"""The shared core every adapter calls: answer a question within a scope, and the commands.

Nothing here knows which chat platform asked. Adapters build a `Context` (who
asks, from where, what they may do), call `ask`, `run_command` or `reindex`,
and render what comes back; every failure is a `BotError` with a sentence fit
for the user. The work lives in the layers below: answers in `bot.answer`,
scope rules in `bot.scope`, re-ingest jobs and forgetting in `bot.jobs`, command
text in `bot.commands` and `bot.reports`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from bot import commands, history_commands, wiring
from bot.answer.streaming import CUT_OFF
from bot.commands import PLAIN, Command, CommandResult, Syntax
from bot.config import ChannelConfig, FileConfig, Settings, load_file_config, load_settings
from bot.context import CLI, Context
from bot.errors import BotError, PermissionDenied
from bot.index.base import Index
from bot.lifecycle import Lifecycle
from bot.llm.chat import LLM
from bot.llm.embeddings import Embedder
from bot.llm.interruptible import InterruptibleChat
from bot.maintenance import Maintenance
from bot.models import Answer, Hit, Question, RepoState, Turn
from bot.reports import StatusFacts, repos_text, status_text
from bot.runtime import metrics
from bot.runtime.drain import Drain
from bot.runtime.limits import Limiter
from bot.runtime.once import Once, deferred
from bot.runtime.queue import AnswerQueue, Ticket
from bot.scope import narrowed, scope_for, states_in_scope, validated
from bot.store import StoreSet
from bot.store.base import CommandHashes, EventClaims, FeedbackRecords, SymbolTable
from bot.store.quota import ProcessQuota
from bot.store.records import FeedbackRow

if TYPE_CHECKING:  # built on first use (see __init__): `status` imports none of them
    from bot.answer.streaming import AnswerStream
    from bot.jobs.upkeep import Upkeep
    from bot.retrieval.hyde import HydeExpander
    from bot.retrieval.prune import Pruner
    from bot.retrieval.retriever import Retriever

__all__ = ["CLI", "CommandResult", "Context", "Core"]

log = logging.getLogger(__name__)

T = TypeVar("T")


class Core(history_commands.HistoryCommands, Maintenance):
    """The facade adapters talk to: its methods and the frozen values they return.

    The collaborators kept as attributes (`index`, `symbols`, `feedback`, `runs`, `llm`,
    `embedder`, `retriever`) are for tests, benchmarks and maintenance commands to
    inspect; a test checks that no adapter reaches them.
    """

    def __init__(
        self,
        settings: Settings,
        config: FileConfig,
        index: Index,
        *,
        llm: LLM | None = None,
        embedder: Embedder | None = None,
        feedback: FeedbackRecords | None = None,
        expander: HydeExpander | None = None,
        pruner: Pruner | None = None,
        symbols: SymbolTable | None = None,
        stores: StoreSet | None = None,
    ) -> None:
        self._settings = settings
        self._config = config
        self.index = index
        stopped = threading.Event()  # set when a stop ends the answers under way
        llm = InterruptibleChat(llm, stopped) if llm is not None else None
        # runs, feedback, locks, claims, symbols...: opened on first use, closed with the Core
        self.stores = stores or wiring.make_stores(settings)
        # Where each name is defined and used, filled by ingest; None if it cannot be opened.
        self.symbols = wiring.make_symbols(settings, self.stores) if symbols is None else symbols
        self.llm = llm
        self.embedder = embedder
        self.feedback = feedback or self.stores.feedback
        self.runs = self.stores.runs
        # Built by first use, so `status` never imports retrieval or ingest (tree-sitter).
        self._answers = Once(
            lambda: wiring.make_composer(
                settings, index, llm, embedder, self.symbols, expander=expander, pruner=pruner
            ).with_history(self.stores.history)
        )
        self._upkeep = Once(self._new_upkeep)
        self.index_repo = deferred(lambda: self._ingest.index_repo)  # `codecite index`
        self._limiter = Limiter(config.limits, lambda: self.stores.quota, fallback=ProcessQuota())
        # One bounded line of answer work per process, shared by every adapter in it.
        self._queue = AnswerQueue.from_config(config.limits)
        self._drain = Drain(
            self._queue, interrupt=lambda: self._life.interrupt_models(), stopped=stopped
        )
        self._life = Lifecycle(
            settings, index, self.stores, self._queue, self._drain, (self.llm, self.embedder)
        )
        self._sections: tuple[str, ...] = ()

    @classmethod
    def from_settings(
        cls,
        settings: Settings | None = None,
        config: FileConfig | None = None,
        *,
        platform_sections: Sequence[str] = (),
    ) -> Core:
        """`platform_sections`: the codecite.toml tables the adapters of this process read."""
        settings = settings or load_settings()
        if config is None:
            config = load_file_config(settings.resolved_config_path(), platform_sections)
        llm = wiring.make_llm(settings)
        stores = wiring.make_stores(settings)
        core = cls(
            settings,
            config,
            wiring.make_index(settings, stores),
            llm=llm,
            embedder=wiring.make_embedder(settings, stores),
            expander=wiring.make_expander(settings, llm),
            pruner=wiring.make_pruner(settings),
            stores=stores,
        )
        core._sections = tuple(platform_sections)
        return core

    @property
    def retriever(self) -> Retriever:
        return self._answers.get().retriever

    @property
    def pruner(self) -> Pruner | None:
        return self._answers.get().pruner

    def _new_upkeep(self) -> Upkeep:
        from bot.jobs.upkeep import Upkeep

        return Upkeep(
            self._settings,
            self.index,
            self.stores,
            lambda: self._config,
            self.load_config,
            embedder=self.embedder,
            symbols=self.symbols,
        )

    # -- what adapters read ------------------------------------------------------------------

    @property
    def settings(self) -> Settings:
        """The environment settings (data directory, ports, webhook secret); a frozen value."""
        return self._settings

    @property
    def config(self) -> FileConfig:
        """codecite.toml as last applied; a frozen value (change it with `use_config`)."""
        return self._config

    def event_claims(self) -> EventClaims:
        """Exactly-once claims on incoming events (a platform's retries), in the shared store."""
        return self.stores.claims

    def command_hashes(self, name: str, what: str) -> CommandHashes:
        """Where an adapter keeps the hash of what it last registered with its platform."""
        return self.stores.command_hashes(name, what)

    def channel_config(self, channel: str) -> ChannelConfig | None:
        return self._config.channels.get(channel) if channel else None

    def is_listed_admin(self, user: str) -> bool:
        """`user` is listed in codecite.toml's `admins` (ids of any platform)."""
        return user in self._config.admins

    def platform_section(self, name: str) -> Mapping[str, Any]:
        """A platform's own table of codecite.toml (`[<platform>]`), unparsed; {} when absent."""
        return self._config.platform_section(name)

    @property
    def embed_model(self) -> str:
        """The embedding model's name; "" when search is lexical only."""
        return self.embedder.model if self.embedder is not None else ""

    def readiness(self) -> str:
        """Why this process cannot answer now ("" when it can): `bot.lifecycle`."""
        return self._life.readiness()

    def gauges(self) -> dict[str, float | None]:
        """What the metrics read at each scrape (`bot.lifecycle`)."""
        return self._life.gauges()

    def never_indexed(self) -> list[str]:
        """Configured repositories the index holds nothing of (the scheduler's boot pass)."""
        indexed = {state.name for state in self.index.repo_states()}
        return [repo.name for repo in self._config.repos if repo.name not in indexed]

    def use_config(self, config: FileConfig) -> None:
        """Answer and ingest by `config` from now on (the scheduler applies a changed file)."""
        self._config = config

    def load_config(self) -> FileConfig:
        """Read codecite.toml again (ConfigError when it is invalid); nothing is applied."""
        return load_file_config(self._settings.resolved_config_path(), self._sections)

    # -- questions ---------------------------------------------------------------------------

    def ask(
        self,
        text: str,
        ctx: Context,
        conversation: Sequence[Turn] = (),
        *,
        repos: frozenset[str] | None = None,
    ) -> Answer:
        """Answer within ctx's scope, narrowed to `repos` (inside it); recorded for 👍/👎."""
        question = self._question(text, ctx, conversation, repos)
        started = time.monotonic()
        try:
            answer = self.answer(question)
        except Exception as exc:
            raise self._drain.translated(exc) from exc
        metrics.answered(ctx.platform, answer.mode, time.monotonic() - started)
        return replace(answer, answer_id=self._record(ctx, question.text, answer))

    def ask_stream(
        self,
        text: str,
        ctx: Context,
        conversation: Sequence[Turn] = (),
        *,
        repos: frozenset[str] | None = None,
        progress: Callable[[str], None] | None = None,
    ) -> AnswerStream:
        """As `ask`, in safe pieces as the model writes (`progress` hears the stages first)."""
        question = self._question(text, ctx, conversation, repos)
        started = time.monotonic()
        stream = self._answers.get().answer_stream(question, self._states(question.scope), progress)

        def done(answer: Answer) -> Answer:
            metrics.answered(ctx.platform, answer.mode, time.monotonic() - started)
            answer = replace(answer, text=self._drain.ending(answer.text, CUT_OFF))
            return replace(answer, answer_id=self._record(ctx, question.text, answer))

        def shown() -> None:
            metrics.first_text(ctx.platform, time.monotonic() - started)

        return stream.on_first(shown).translated(self._drain.translated).then(done)

    def _question(
        self, text: str, ctx: Context, turns: Sequence[Turn], repos: frozenset[str] | None
    ) -> Question:
        self._drain.check()  # told to stop: a question not started yet ends at once
        limit = self._config.limits.max_question_chars
        scope = narrowed(scope_for(self._config, ctx), repos)
        question = Question(validated(text, limit), scope, tuple(turns), ctx.user, ctx.channel)
        self._limiter.check(ctx)  # after validation and scope: a refusal costs no quota
        metrics.question(ctx.platform)
        return question

    def answer(self, question: Question) -> Answer:
        """Answer a question whose scope is already decided (benchmarks, evaluation)."""
        return self._answers.get().answer(question, self._states(question.scope))

    def repo_map(self, repo: str | None, ctx: Context) -> Answer:
        """The map of the repositories `ctx` may see (or of one of them): tree and key symbols."""
        scope = narrowed(scope_for(self._config, ctx), frozenset({repo}) if repo else None)
        return self._answers.get().repo_map(self._states(scope))

    def search(
        self, text: str, ctx: Context, *, repos: frozenset[str] | None = None, top_k: int = 10
    ) -> list[Hit]:
        scope = narrowed(scope_for(self._config, ctx), repos)
        in_scope = None if scope is None else frozenset(self._states(scope))
        limit = self._config.limits.max_question_chars
        return self._answers.get().retriever.search(validated(text, limit), in_scope, top_k=top_k)

    def scope_for(self, ctx: Context) -> frozenset[str] | None:
        """The repositories `ctx` may see; None means every indexed repository."""
        return scope_for(self._config, ctx)

    def _states(self, scope: frozenset[str] | None) -> dict[str, RepoState]:
        return states_in_scope(self.index.repo_states(), scope)

    def _record(self, ctx: Context, question: str, answer: Answer) -> str:
        """The answer's feedback id; "" when it could not be stored (an answer beats buttons)."""
        try:
            return self.feedback.record_answer(
                platform=ctx.platform,
                channel=ctx.channel,
                asker=ctx.user,
                question=question,
                answer=answer,
            )
        except BotError as exc:
            log.warning("answer not recorded for feedback: %s", exc.detail or exc.user_message)
            return ""

    def submit(self, work: Callable[[], T]) -> Ticket[T]:
        """Queue answer work on the process's bounded line; RateLimited when it is full."""
        return self._queue.submit(work)

    def record_vote(self, answer_id: str, voter: str, vote: int) -> bool:
        """A 👍 (1) or 👎 (-1) on a recorded answer; False when that answer is not on record."""
        return self.feedback.record_vote(answer_id, voter, vote)

    def votes(self, limit: int = 100) -> list[FeedbackRow]:
        return self.feedback.list(limit=limit)

    # -- commands ----------------------------------------------------------------------------

    def run_command(
        self, line: str | Command, ctx: Context, syntax: Syntax = PLAIN
    ) -> CommandResult:
        """A parsed command (or a line to parse); `syntax` writes the help of the asker's platform.

        `reindex` does not run here: it is queued on the ingest line and its report
        follows in `later`.
        """
        command = commands.parse(line) if isinstance(line, str) else line
        spec, argument = command.spec, command.argument
        if spec is commands.HELP:
            return CommandResult(commands.help_text(syntax), ephemeral=True)
        if spec is commands.STATUS:
            return CommandResult(status_text(self._status_facts(ctx)), ephemeral=True)
        if spec is commands.REPOS:
            text = repos_text(self.index.repo_states(), self.scope_for(ctx))
            return CommandResult(text, ephemeral=True)
        if spec is commands.REINDEX:
            return CommandResult("", later=self.reindex(argument or None, ctx))
        if spec is commands.FORGET:  # asks first; `forget <repo> yes` removes it
            if not ctx.is_admin:
                raise PermissionDenied()
            return self._upkeep.get().forget(argument, self.scope_for(ctx), syntax)
        if spec is commands.MAP:
            answer = self.repo_map(argument or None, ctx)
            line = f"{spec.name} {argument}".strip()
            return CommandResult(
                "", answer=replace(answer, answer_id=self._record(ctx, line, answer))
            )
        assert spec is commands.ASK
        return CommandResult("", answer=self.ask(argument, ctx))

    def _status_facts(self, ctx: Context) -> StatusFacts:
        settings = self._settings
        return StatusFacts(
            scope=self.scope_for(ctx),  # first: a refusal reads nothing
            indexed=self.index.repo_states(),
            configured=[r.name for r in self._config.repos],
            model=self.llm.model if self.llm is not None else "",
            embed_model=self.embed_model,
            index=settings.index,
            symbols=self.symbols,
            runs=self.runs,
            locks=self.stores.locks,
            folders=(settings.home, settings.index_path.parent),
            history=self.stores.history,
        )

    # -- stopping ----------------------------------------------------------------------------

    @property
    def draining(self) -> bool:
        """Stopping: no new question is taken (adapters refuse new events)."""
        return self._drain.draining

    def drain(self, grace: float | None = None) -> bool:
        """Stop within a deadline (`bot.runtime.drain`): take no new question, let the
        answers under way finish up to `grace` (CODECITE_SHUTDOWN_GRACE), then end each one
        still unfinished with one line. True when all finished in time; idempotent."""
        return self._life.drain(grace)

    def close(self) -> None:
        """Finish accepted answers and ingests, then release every store and client."""
        self._queue.shutdown(wait=True)
        upkeep = self._upkeep.built()
        if upkeep is not None:
            upkeep.close()
        resources = (self.llm, self.embedder, self.index, self.feedback, self.symbols, self.stores)
        for resource in resources:
            close = getattr(resource, "close", None)
            if close is not None:
                close()
