"""The shared core every adapter calls: answer a question within a scope, and the commands.

Nothing here knows which chat platform asked. Adapters build a `Context`,
call `ask` or `run_command`, and render what comes back; every failure is a
`BotError` with a sentence fit for the user.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from bot.answer.citations import resolve_citations
from bot.answer.extractive import extractive_answer
from bot.answer.prompts import NOT_ANSWERED, build_messages
from bot.answer.safety import make_safe
from bot.answer.symbol_answer import facts_block, map_answer, missing_note, symbol_answer
from bot.config import ChannelConfig, FileConfig, Settings, load_file_config, load_settings
from bot.errors import BotError, NotIndexedError, PermissionDenied, QuestionError, ScopeError
from bot.index.base import Index
from bot.ingest.hosting import permalink
from bot.ingest.pipeline import IngestOptions, Ingestor, IngestReport, Progress
from bot.ingest.sources import default_name
from bot.llm.chat import LLM
from bot.llm.embeddings import Embedder
from bot.models import (
    Answer,
    AnswerMode,
    Citation,
    Freshness,
    Hit,
    Question,
    RepoState,
    Turn,
    Usage,
)
from bot.reports import help_text, reindex_text, repos_text, status_text
from bot.retrieval.hyde import HydeExpander
from bot.retrieval.prune import Pruner
from bot.retrieval.retriever import Retrieval, Retriever, Source
from bot.runtime.limits import Limiter
from bot.runtime.queue import AnswerQueue
from bot.store import StoreSet
from bot.store.base import FeedbackRecords, SymbolTable
from bot.store.runs import Run
from bot.wiring import make_embedder, make_index, make_llm, make_stores, make_symbols

log = logging.getLogger(__name__)


Audience = Literal["internal", "external", "unknown"]

DM_REFUSED = "Direct messages to codecite are not enabled for you; ask in a channel."
EXTERNAL_REFUSED = (
    "This conversation includes people from other organisations, so codecite answers here "
    "only if it is mapped in codecite.toml."
)
UNKNOWN_REFUSED = (
    "codecite could not check who can read this conversation, so it answers here only if "
    "it is mapped in codecite.toml; ask in a channel or in a direct message with codecite."
)


@dataclass(frozen=True, slots=True)
class Context:
    """Who asks, and from where.

    `is_dm`: a private conversation with the bot, one-to-one or a group DM (the DM
    allowlist applies). `audience`: who can read the conversation: members of the
    organisation only, people of other organisations too (a shared channel), or
    unknown (the platform could not say); outside "internal" only an explicit mapping
    of the conversation gives a scope. `roles`: role ids the asker holds in `guild`.
    """

    platform: str
    user: str
    channel: str = ""
    guild: str = ""
    is_dm: bool = False
    roles: tuple[str, ...] = ()
    audience: Audience = "internal"


CLI = Context(platform="cli", user="local")


@dataclass(frozen=True, slots=True)
class CommandResult:
    text: str
    answer: Answer | None = None
    ephemeral: bool = False


class Core:
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
        self.settings = settings
        self.config = config
        self.index = index
        # runs, feedback, locks, claims, symbols...: opened on first use, closed with the Core
        self.stores = stores or make_stores(settings)
        # Where each name is defined and used, filled by ingest; None if it cannot be opened.
        self.symbols = symbols if symbols is not None else make_symbols(settings, self.stores)
        self.llm = llm
        self.embedder = embedder
        self.feedback = feedback or self.stores.feedback
        self.expander = expander
        self.pruner = pruner
        self.retriever = Retriever(
            index,
            embedder,
            file_weight=settings.file_weight,
            context_tokens=settings.context_tokens,
            expander=expander,
            # the symbol table, when there is one, answers "where is X defined / who calls X"
            symbols=self.symbols,
        )
        self.runs = self.stores.runs
        self.limiter = Limiter(config.limits)
        # One bounded line of answer work per process, shared by every adapter in it.
        self.queue = AnswerQueue.from_config(config.limits)

    @classmethod
    def from_settings(
        cls, settings: Settings | None = None, config: FileConfig | None = None
    ) -> Core:
        settings = settings or load_settings()
        if config is None:
            config = load_file_config(settings.resolved_config_path())
        llm = make_llm(settings)
        prune_llm = make_llm(settings, model=settings.prune_model) if settings.prune else None
        stores = make_stores(settings)
        return cls(
            settings,
            config,
            make_index(settings, stores),
            llm=llm,
            embedder=make_embedder(settings, stores),
            expander=HydeExpander(llm) if settings.hyde and llm is not None else None,
            pruner=Pruner(prune_llm) if prune_llm is not None else None,
            stores=stores,
        )

    # -- questions ---------------------------------------------------------------------------

    def ask(
        self,
        text: str,
        ctx: Context,
        conversation: Sequence[Turn] = (),
        *,
        repos: frozenset[str] | None = None,
    ) -> Answer:
        """Answer within ctx's scope, optionally narrowed to `repos` (which must lie inside it)."""
        question = Question(
            text=self._validated(text),
            scope=self._narrowed(self.scope_for(ctx), repos),
            conversation=tuple(conversation),
            user=ctx.user,
            channel=ctx.channel,
        )
        self.limiter.check(ctx)  # after validation and scope: a refusal costs no quota
        return self.answer(question)

    def answer(self, question: Question) -> Answer:
        started = time.perf_counter()
        states = self._states_in_scope(question.scope)
        repos = None if question.scope is None else frozenset(states)
        retrieval = self.retriever.retrieve(_retrieval_text(question), repos)
        answered_at = time.perf_counter()
        link = _Permalinker(states)
        text, citations, mode, usage = self._composed(question, retrieval, link)
        text = make_safe(
            text,
            [c.url for c in citations],
            "\n".join(s.text for s in retrieval.sources),
        )
        cited: set[str] = {c.repo for c in citations} or set(states)
        timings = {
            **retrieval.timings,
            "answer": time.perf_counter() - answered_at,
            "total": time.perf_counter() - started,
        }
        return Answer(
            text=text,
            citations=citations,
            freshness=_freshness(states, cited),
            usage=usage,
            timings=timings,
            mode=mode,
        )

    def _composed(
        self, question: Question, retrieval: Retrieval, link: _Permalinker
    ) -> tuple[str, tuple[Citation, ...], AnswerMode, Usage]:
        """The answer text: exact from the symbol table, extractive, or the model's."""
        usage = retrieval.usage
        facts = retrieval.symbols
        exact = facts is not None and facts.answerable
        if exact and facts is not None and self.llm is None:
            text, citations = symbol_answer(facts, retrieval.sources, link)
            return text, citations, "extractive", usage
        if not retrieval.sources and not exact:
            return _noted(missing_note(facts), NOT_ANSWERED), (), "empty", usage
        if self.llm is None:
            terms = (*retrieval.analysis.terms, *retrieval.analysis.exact_terms)
            text, citations = extractive_answer(terms, retrieval.sources, link)
            return _noted(missing_note(facts), text), citations, "extractive", usage
        sources = retrieval.sources
        if self.pruner is not None:
            sources, prune_usage = self.pruner.prune(question.text, sources)
            usage = usage + prune_usage
        messages = build_messages(
            question.text, sources, question.conversation, facts=facts_block(facts, sources)
        )
        completion = self.llm.complete(messages, max_tokens=self.settings.answer_max_tokens)
        text, citations = resolve_citations(completion.text, sources, link)
        usage = usage + Usage(completion.prompt_tokens, completion.completion_tokens)
        return text, citations, "llm", usage

    def repo_map(self, repo: str | None, ctx: Context) -> Answer:
        """The map of the repositories `ctx` may see (or of one of them): tree and key symbols."""
        started = time.perf_counter()
        scope = self._narrowed(self.scope_for(ctx), frozenset({repo}) if repo else None)
        states = self._states_in_scope(scope)
        maps = self.retriever.symbol_finder.mapper.maps(states.values())
        text, citations = map_answer(maps, _Permalinker(states))
        return Answer(
            text=make_safe(text, [c.url for c in citations]),
            citations=citations,
            freshness=_freshness(states, set(states)),
            timings={"total": time.perf_counter() - started},
            mode="extractive",
        )

    def record_answer(self, ctx: Context, question: str, answer: Answer) -> str:
        """Store a posted answer for 👍/👎 feedback; its id, or "" when it could not be stored.

        Losing the vote buttons is better than losing the answer, so this never raises.
        """
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

    def search(
        self, text: str, ctx: Context, *, repos: frozenset[str] | None = None, top_k: int = 10
    ) -> list[Hit]:
        scope = self._narrowed(self.scope_for(ctx), repos)
        states = self._states_in_scope(scope)
        in_scope = None if scope is None else frozenset(states)
        return self.retriever.search(self._validated(text), in_scope, top_k=top_k)

    @staticmethod
    def _narrowed(
        scope: frozenset[str] | None, repos: frozenset[str] | None
    ) -> frozenset[str] | None:
        if repos is None:
            return scope
        outside = sorted(repos - scope) if scope is not None else []
        if outside:
            raise ScopeError(f"The repository {outside[0]!r} is not available here.")
        return repos

    def _validated(self, text: str) -> str:
        text = text.strip()
        if not text:
            raise QuestionError("Please ask a question about the code, e.g. `where do we retry?`")
        limit = self.config.limits.max_question_chars
        if len(text) > limit:
            raise QuestionError(
                f"That question is too long ({len(text):,} characters; the limit is {limit:,})."
            )
        return text

    def _states_in_scope(self, scope: frozenset[str] | None) -> dict[str, RepoState]:
        states = {s.name: s for s in self.index.repo_states()}
        if not states:
            raise NotIndexedError()
        if scope is None:
            return states
        in_scope = {name: states[name] for name in scope if name in states}
        if not in_scope:
            if scope and len(scope) == 1 and next(iter(scope)) not in states:
                raise NotIndexedError(f"The repository {next(iter(scope))!r} is not indexed.")
            raise NotIndexedError("None of the repositories available here is indexed yet.")
        return in_scope

    # -- scope and permissions ---------------------------------------------------------------

    def scope_for(self, ctx: Context) -> frozenset[str] | None:
        """The repositories `ctx` may see; None means every indexed repository.

        An entry for the conversation's own id decides, whatever the conversation is
        (a team that maps a group DM or a shared channel has chosen). Without one: a
        conversation with outsiders, or of unknown kind, sees nothing; a DM needs the
        asker on the DM allowlist; then the guild's entry, then the default scope.
        """
        channel = self.channel_config(ctx.channel)
        if channel is not None:
            return frozenset(channel.repos)
        if ctx.audience == "external":
            raise PermissionDenied(EXTERNAL_REFUSED)
        if ctx.audience != "internal":
            raise PermissionDenied(UNKNOWN_REFUSED)
        allowlist = self.config.dm_allowlist
        if ctx.is_dm and allowlist is not None and ctx.user not in allowlist:
            raise PermissionDenied(DM_REFUSED)
        guild = self.channel_config(ctx.guild) if ctx.guild else None
        if guild is not None:
            return frozenset(guild.repos)
        if self.config.default_scope is not None:
            return frozenset(self.config.default_scope)
        return None

    def channel_config(self, channel: str) -> ChannelConfig | None:
        return self.config.channels.get(channel) if channel else None

    def is_admin(self, ctx: Context) -> bool:
        """The terminal, a user listed in `admins`, or a holder of the admin role id.

        The role counts only in the servers listed in `discord.guild_ids`: a role
        id is matched in the server it belongs to, never a name anyone could copy.
        """
        if ctx.platform == "cli":
            return True  # whoever runs the CLI already has the data directory
        if ctx.user in self.config.admins:
            return True
        discord = self.config.discord
        in_configured_guild = ctx.guild.isdigit() and int(ctx.guild) in discord.guild_ids
        return bool(discord.admin_role) and in_configured_guild and discord.admin_role in ctx.roles

    # -- commands ----------------------------------------------------------------------------

    def run_command(self, line: str, ctx: Context) -> CommandResult:
        word, _, rest = line.strip().partition(" ")
        command = word.lower()
        if command in ("", "help"):
            return CommandResult(help_text(ctx.platform), ephemeral=True)
        if command == "status":
            return CommandResult(status_text(self, self.scope_for(ctx)), ephemeral=True)
        if command == "repos":
            return CommandResult(repos_text(self, self.scope_for(ctx)), ephemeral=True)
        if command == "reindex":
            return CommandResult(self.reindex(rest.strip() or None, ctx))
        if command == "map":
            return CommandResult("", answer=self.repo_map(rest.strip() or None, ctx))
        question = rest if command == "ask" else line
        return CommandResult("", answer=self.ask(question, ctx))

    def reindex(self, repo: str | None, ctx: Context) -> str:
        if not self.is_admin(ctx):
            raise PermissionDenied()
        targets = self._reindex_targets(repo, ctx)
        results: list[tuple[str, IngestReport | BotError]] = []
        for name, location, branch in targets:
            try:
                report = self.index_repo(
                    location, name=name, branch=branch or None, trigger=f"{ctx.platform} command"
                )
                results.append((name, report))
            except BotError as exc:
                log.warning("reindex of %s failed: %s", name, exc.detail or exc.user_message)
                results.append((name, exc))
        return reindex_text(results)

    def _reindex_targets(self, repo: str | None, ctx: Context) -> list[tuple[str, str, str]]:
        configured = {r.name: (r.name, r.location, r.branch) for r in self.config.repos}
        recorded = {s.name: (s.name, s.source, s.branch) for s in self.index.repo_states()}
        known = {**recorded, **configured}
        scope = self.scope_for(ctx)
        if repo is not None:
            if repo not in known or (scope is not None and repo not in scope):
                raise ScopeError(f"There is no repository named {repo!r} here.")
            return [known[repo]]
        return [t for name, t in sorted(known.items()) if scope is None or name in scope]

    def index_repo(
        self,
        location: str,
        *,
        name: str | None = None,
        branch: str | None = None,
        progress: Progress | None = None,
        trigger: str = "cli",
        wait: float | None = None,
        quick: bool = False,
    ) -> IngestReport:
        """Ingest what changed, holding the repository's lock; every run is logged for status.

        `wait` bounds how long to wait for another ingest of the same repository
        (None: as long as it takes; 0: give up at once with RepositoryBusy).
        `quick` skips all work when the source's commit equals the indexed one.
        """
        name = name or default_name(location)
        with self.stores.locks.hold(name, wait=wait):
            started = datetime.now(UTC)
            clock = time.monotonic()
            run_id = self.runs.begin(name, started, trigger)  # best-effort, like every log write
            try:
                report = self._ingest(location, name, branch, progress, quick)
            except BotError as exc:
                seconds = time.monotonic() - clock
                self.runs.finish(run_id, Run.failed(name, started, seconds, trigger, exc))
                raise
            except Exception:
                # A bug, not bad input: status must still show that the run failed.
                failure = BotError("The ingest failed unexpectedly; see the log.")
                seconds = time.monotonic() - clock
                self.runs.finish(run_id, Run.failed(name, started, seconds, trigger, failure))
                raise
            self.runs.finish(run_id, Run.from_report(report, started, trigger))
        return report

    def _ingest(
        self,
        location: str,
        name: str,
        branch: str | None,
        progress: Progress | None,
        quick: bool,
    ) -> IngestReport:
        configured = self.config.repo(name)
        options = IngestOptions(
            name=name,
            branch=branch or (configured.branch if configured else None) or None,
            include=configured.include if configured else (),
            exclude=configured.exclude if configured else (),
            token=self.settings.github_token.get_secret_value()
            if self.settings.github_token
            else None,
            max_file_bytes=self.settings.max_file_bytes,
        )
        ingestor = Ingestor(
            self.index, home=self.settings.home, embedder=self.embedder, symbols=self.symbols
        )
        return ingestor.ingest(location, options, progress, quick=quick)

    def forget_repo(self, name: str) -> None:
        """Stop answering from a repository: drop it from the index and the symbol table."""
        self.index.remove_repo(name)
        if self.symbols is not None:
            self.symbols.remove_repo(name)

    def close(self) -> None:
        """Finish accepted answers, then release every store and client."""
        self.queue.shutdown(wait=True)
        resources = (self.llm, self.embedder, self.index, self.feedback, self.symbols, self.stores)
        for resource in resources:
            close = getattr(resource, "close", None)
            if close is not None:
                close()


class _Permalinker:
    """Links a source at its repository's indexed commit ("" for local repositories)."""

    def __init__(self, states: dict[str, RepoState]) -> None:
        self._states = states

    def __call__(self, source: Source) -> str:
        state = self._states.get(source.repo)
        if state is None:
            return ""
        return permalink(
            state.web_url, state.commit, source.path, source.start_line, source.end_line
        )


def _retrieval_text(question: Question) -> str:
    """A follow-up like "and who calls it?" needs the previous question to be searchable."""
    previous = [t.text for t in question.conversation if t.role == "user"]
    if previous and len(question.text) < 200:
        return f"{question.text}\n{previous[-1][:500]}"
    return question.text


def _noted(note: str, text: str) -> str:
    return f"{note} {text}" if note else text


def _freshness(states: dict[str, RepoState], repos: set[str]) -> tuple[Freshness, ...]:
    return tuple(states[name].freshness() for name in sorted(repos) if name in states)
