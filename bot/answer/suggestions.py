"""Questions worth asking, drawn from what is indexed: a chat surface offers them as prompts.

The source is a repository map (`Core.repo_map`, so the asker's scope already
applies): its freshness names the repositories, its citations the symbols the
rest of the code refers to most, in that order. Each prompt is a question the
symbol table answers exactly ("where is `X` defined and who calls it?", "how is
shop organised?"), so clicking one never depends on search luck.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import zip_longest

from bot.models import Answer
from bot.retrieval.symbol_questions import MAX_QUESTION_CHARS

MAX_PROMPTS = 4  # Slack shows at most four suggested prompts
TITLE_CHARS = 60  # a prompt's label: one short line
OVERVIEW_REPOS = 2  # repositories that get a "how is it organised?" of their own


@dataclass(frozen=True, slots=True)
class Prompt:
    title: str  # what the button says
    message: str  # what is asked when it is clicked


def suggested_prompts(repo_map: Answer, *, limit: int = MAX_PROMPTS) -> list[Prompt]:
    """Up to `limit` prompts: an overview per repository (two at most), then the most
    referenced symbols taken in turn from each repository; [] when nothing is indexed."""
    repos = list(dict.fromkeys(f.repo for f in repo_map.freshness))
    if not repos or limit <= 0:
        return []
    overviews = [_overview(repo) for repo in repos]
    symbols = list(_symbol_prompts(repo_map, repos))
    # One repository: its overview and three symbols; more: two overviews, then symbols.
    chosen = _unique([*overviews[:OVERVIEW_REPOS], *symbols])[:limit]
    if len(chosen) < limit:  # few symbols: the other repositories' overviews
        chosen += overviews[OVERVIEW_REPOS:][: limit - len(chosen)]
    return chosen


def _overview(repo: str) -> Prompt:
    return Prompt(_short(f"How is {repo} organised?"), f"How is {repo} organised?")


def _symbol_prompts(repo_map: Answer, repos: Sequence[str]) -> Iterator[Prompt]:
    """The map's symbols as questions, alternating between repositories, best first."""
    per_repo: dict[str, list[str]] = {repo: [] for repo in repos}
    for citation in repo_map.citations:
        name = citation.symbol
        if name and _plain(name) and name not in per_repo.setdefault(citation.repo, []):
            per_repo[citation.repo].append(name)
    for row in zip_longest(*per_repo.values()):
        for name in row:
            if name is None:
                continue
            message = f"Where is `{name}` defined and who calls it?"
            if len(message) <= MAX_QUESTION_CHARS:  # longer is no longer a lookup
                yield Prompt(_short(f"Where is {name} defined?"), message)


def _plain(name: str) -> bool:
    """A name that reads as code on one line (it came from a repository)."""
    return name.isprintable() and "`" not in name


def _short(text: str) -> str:
    if len(text) <= TITLE_CHARS:
        return text
    return text[: TITLE_CHARS - 1].rstrip() + "…"


def _unique(prompts: Sequence[Prompt]) -> list[Prompt]:
    return list(dict.fromkeys(prompts))
