"""Build the index, model and embedder the settings ask for (and nothing else)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from bot.config import Settings
from bot.errors import BotError, ConfigError
from bot.index.base import Index
from bot.llm.chat import LLM
from bot.llm.deferred import DeferredChat, DeferredEmbedder
from bot.llm.embeddings import Embedder

if TYPE_CHECKING:
    from bot.answer.compose import Composer
    from bot.index.pinecone.index import PineconeIndex
    from bot.retrieval.hyde import HydeExpander
    from bot.retrieval.prune import Pruner
    from bot.store.base import HistoryRecords, StoreSet, SymbolTable

log = logging.getLogger(__name__)

PLACEHOLDER_KEY = "unused"  # keyless OpenAI-compatible servers (Ollama, vLLM) still need a value


def _api_key(settings: Settings) -> str:
    key = settings.openai_api_key
    return key.get_secret_value() if key is not None else PLACEHOLDER_KEY


def make_index(settings: Settings, stores: StoreSet | None = None) -> Index:
    if settings.index == "pinecone":
        from bot.index.pinecone.index import STATE_FILE, PineconeIndex
        from bot.index.pinecone.state import rebuild_wanted

        state_file = settings.home / STATE_FILE
        lost = not state_file.exists()  # looked at before the state is opened (and created)
        index = PineconeIndex.from_settings(
            settings,
            dimension=settings.embed_dimensions,
            alpha=settings.hybrid_alpha,
            stores=stores,
        )
        if settings.database and stores is not None:
            _rebuild_state(index, unless_filled=not _rebuild_asked(stores))
        elif lost or rebuild_wanted(state_file):  # gone, or set aside as damaged
            _rebuild_state(index)
        return index
    from bot.index.local.index import LocalIndex

    return LocalIndex(settings.index_path)


def _rebuild_asked(stores: StoreSet) -> bool:
    """Whether the shared store asks for its Pinecone state to be rebuilt.

    The database, not this process's data directory, decides: a fresh process beside a
    filled database rebuilds nothing, so replicas start at once without racing the writers.
    Unasked, the state is still rebuilt when it holds no repository while Pinecone's
    namespace holds records (a deployment moving from the SQLite state file to PostgreSQL:
    the first process fills it, later ones find it full).
    """
    try:
        return stores.pinecone_state.rebuild_wanted()
    except BotError as exc:  # unreachable now: answers and readiness report it later
        log.warning("Pinecone state not checked: %s", exc.detail or exc.user_message)
        return False


def symbols_path(settings: Settings) -> Path:
    """The symbol table's file: beside the local index file, or in the data directory."""
    if settings.index == "pinecone":
        return settings.home / "symbols.sqlite"
    index = settings.index_path
    return index.with_name(f"{index.stem}.symbols.sqlite")


def make_stores(settings: Settings) -> StoreSet:
    """The records kept besides the index (run log, feedback, locks, claims, symbols...).

    With a database URL (CODECITE_DATABASE_URL or DATABASE_URL) every part lives in
    PostgreSQL (`bot.store.postgres`), shared by every process. Without one, everything
    is SQLite and lock files in the data directory (psycopg is never imported). The
    local index (CODECITE_INDEX=local) stays a file either way.
    """
    from bot.store import open_store

    return open_store(
        settings.home,
        symbols_path=symbols_path(settings),
        database_url=settings.database,
        embedding_cache_max=settings.embedding_cache_max,
    )


def make_symbols(settings: Settings, stores: StoreSet | None = None) -> SymbolTable | None:
    """The symbol table; None (logged) when it cannot be opened, so answers and ingests go on.

    A damaged file is set aside and a new one started (see `bot.store.sqlite`); the next
    ingest refills it. A shared database that cannot be reached is no reason to go on
    without symbols: its StoreError (naming the host) stops the process at start.
    """
    from bot.store.symbols.table import SymbolStore

    try:
        if stores is not None:
            return stores.symbols
        return SymbolStore(symbols_path(settings))
    except BotError as exc:
        if settings.database:
            raise
        log.warning("no symbol table: %s", exc.detail or exc.user_message)
        return None


def ingest_parts(
    settings: Settings,
) -> tuple[Index, Embedder | None, SymbolTable | None, HistoryRecords | None, Callable[[], None]]:
    """What an ingest writes through, opened afresh (in an ingest's child process,
    `bot.jobs.offload`), and the function that closes it all."""
    stores = make_stores(settings)
    index = make_index(settings, stores)
    embedder = make_embedder(settings, stores)
    symbols = make_symbols(settings, stores)
    history = stores.history

    def close() -> None:
        for resource in (embedder, index, symbols, stores):
            closer = getattr(resource, "close", None)
            if closer is not None:
                closer()

    return index, embedder, symbols, history, close


def make_llm(settings: Settings, *, model: str | None = None) -> LLM | None:
    """The chat model; its client (and the openai SDK) is built by its first request."""
    if not settings.llm_configured:
        return None
    name = model or settings.chat_model

    def build() -> LLM:
        from bot.llm.openai_chat import OpenAIChat

        return OpenAIChat(
            name,
            api_key=_api_key(settings),
            base_url=settings.openai_base_url,
            timeout=settings.llm_timeout,
        )

    return DeferredChat(name, build)


def make_embedder(settings: Settings, stores: StoreSet | None = None) -> Embedder | None:
    """The embedder (its cache opened now, its client by the first request)."""
    if not settings.embeddings_configured:
        return None
    from bot.llm.embedding_cache import EmbeddingCache

    try:
        cache = (
            stores.embedding_cache
            if stores is not None
            else EmbeddingCache(
                settings.home / "embeddings.sqlite", max_entries=settings.embedding_cache_max
            )
        )
    except OSError as exc:
        raise ConfigError(f"Cannot create the embedding cache in {settings.home}.") from exc

    def build() -> Embedder:
        from bot.llm.openai_embedder import OpenAIEmbedder

        return OpenAIEmbedder(
            settings.embed_model,
            api_key=_api_key(settings),
            base_url=settings.openai_base_url,
            dimensions=settings.embed_dimensions,
            cache=cache,
            timeout=settings.llm_timeout,
        )

    return DeferredEmbedder(settings.embed_model, settings.embed_dimensions, build)


def make_composer(
    settings: Settings,
    index: Index,
    llm: LLM | None,
    embedder: Embedder | None,
    symbols: SymbolTable | None,
    *,
    expander: HydeExpander | None = None,
    pruner: Pruner | None = None,
) -> Composer:
    """Retrieval and answers over `index` (the Core builds them for its first question;
    `Composer.with_history` adds history questions)."""
    from bot.answer.compose import Composer
    from bot.retrieval.architecture import ArchitectureReader
    from bot.retrieval.howpath import PathFinder
    from bot.retrieval.retriever import Retriever

    retriever = Retriever(
        index,
        embedder,
        file_weight=settings.file_weight,
        context_tokens=settings.context_tokens,
        expander=expander,
        # the symbol table, when there is one, answers "where is X defined / who calls X"
        symbols=symbols,
    )
    return Composer(
        retriever,
        llm,
        pruner=pruner,
        max_tokens=settings.answer_max_tokens,
        paths=PathFinder(index, symbols),
        architecture=ArchitectureReader(index, symbols),
        symbols=symbols,
    )


def make_expander(settings: Settings, llm: LLM | None) -> HydeExpander | None:
    """HyDE: the model drafts the code it expects, searched beside the question."""
    if not settings.hyde or llm is None:
        return None
    from bot.retrieval.hyde import HydeExpander

    return HydeExpander(llm)


def make_pruner(settings: Settings) -> Pruner | None:
    """A model (CODECITE_PRUNE_MODEL) that drops retrieved sources beside the question."""
    llm = make_llm(settings, model=settings.prune_model) if settings.prune else None
    if llm is None:
        return None
    from bot.retrieval.prune import Pruner

    return Pruner(llm)


def _rebuild_state(index: PineconeIndex, *, unless_filled: bool = False) -> None:
    """The state is a digest of what Pinecone holds: rebuild it when it is gone (a file) or
    was never filled (a new database beside a full index)."""
    try:
        if not index.rebuild_state(unless_filled=unless_filled):
            return
    except BotError as exc:  # e.g. a first deployment whose index does not exist yet
        log.warning("Pinecone state not rebuilt: %s", exc.detail or exc.user_message)
        return
    log.info("Pinecone state rebuilt: %d repositories", len(index.repo_states()))
