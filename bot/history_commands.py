"""The Core's history commands (`search --json`'s commit hits, `codecite log`): a part of the
facade kept beside it, so `bot/core.py` stays one job. Imports nothing heavy: the answer
layer is reached through the Core's composer, built on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.config import FileConfig
from bot.context import Context
from bot.models import RepoState
from bot.runtime.once import Once
from bot.scope import narrowed, scope_for, validated

if TYPE_CHECKING:
    from bot.answer.compose import Composer
    from bot.answer.history_log import LogResult
    from bot.retrieval.history_search import CommitHit


class HistoryCommands:
    """Mixed into `Core`, which provides `_config`, `_answers` and `_states`."""

    _config: FileConfig
    _answers: Once[Composer]

    def _states(self, scope: frozenset[str] | None) -> dict[str, RepoState]:
        raise NotImplementedError  # the Core's

    def search_commits(
        self, text: str, ctx: Context, *, repos: frozenset[str] | None = None, top_k: int = 10
    ) -> list[CommitHit]:
        """Commit hits for a history question in ctx's scope ([] for a code question)."""
        states = self._states(narrowed(scope_for(self._config, ctx), repos))
        text = validated(text, self._config.limits.max_question_chars)
        return self._answers.get().history_answers().commit_hits(text, states, top_k)

    def history_log(self, repo: str, target: str, ctx: Context, *, limit: int = 30) -> LogResult:
        """`codecite log`: the recorded commits that touched a path or symbol of `repo`."""
        states = self._states(narrowed(scope_for(self._config, ctx), frozenset({repo})))
        return self._answers.get().history_answers().log(repo, target, states, limit=limit)
