"""How an answer is scored against a question's gold and decoy line ranges.

The rules, per answer (a citation is in gold when it overlaps a gold range: same path,
at least one line in common). For `callers`, citations of the definition asked about
(the case's `target`) are left out first: an answer may show the definition before the
call sites, and a definition that spans a call site is not a call site.

- first in gold: the first citation is in gold.
- right anywhere: some citation is in gold. `covered` is the share of gold ranges that
  some citation overlaps (how much of a caller list, or of a how-path, is shown).
- not found: the answer says the code does not cover the question: mode "empty", or its
  opening sentence is one of codecite's not-found sentences (`NOT_COVERED`,
  `NOT_ANSWERED`, `NOTHING`, the symbol table's "I found no definition ...", "The indexed
  code has no function, class or method named ...") or a rewording of them (NOT_FOUND_LEAD
  below: "does not mention/cover/answer", "I found no/nothing", "I could not find"...).
- false not-found (gold non-empty): not found, or no citation at all.
- not-found handled (`unanswerable`): not found.
- confidently wrong (`definition`): the answer is not a not-found, its first citation is
  outside gold, and either that citation overlaps a decoy or the text before the first
  code block asserts a definition ("is defined in", "is an alias", "comes from", ...).
  An answer that hedges (lists several definitions or candidates, says it is unsure)
  and cites a right range among them is not confidently wrong; one that hedges among
  wrong ranges only still is.
- cites a decoy: some citation overlaps a decoy (for `callers`: a call of another function
  listed as a call of this one).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bench.answer_cases import AnswerCase, Span
from bot.answer.extractive import NOTHING
from bot.answer.prompts import NOT_ANSWERED
from bot.retrieval.relevance import NOT_COVERED

# Today's sentences, verbatim (they may be reworded: NOT_FOUND_LEAD catches the rewordings).
NOT_FOUND_SENTENCES = (
    NOT_COVERED,
    NOT_ANSWERED,
    NOTHING,
    "I found no definition of",
    "The indexed code has no function, class or method named",
)
NOT_FOUND_LEAD = re.compile(
    r"(?:the indexed code (?:does not|doesn't|did not) (?:seem to )?"
    r"(?:mention|cover|answer|contain|include|define)"
    r"|the indexed code has no (?:function|class|method|definition|mention)"
    r"|i (?:found|find|could find|can find) (?:no|nothing)\b"
    r"|i (?:did not|didn't|could not|couldn't|cannot|can't) find\b"
    r"|nothing in the indexed code\b"
    r"|no (?:definition|mention) of (?:that|this|the)\b)",
    re.IGNORECASE,
)
ASSERTS_DEFINITION = re.compile(
    r"\b(?:is|are) (?:defined|declared|implemented|created|generated|made|assigned|bound|"
    r"re-?exported|exported|an alias|inherited)\b|\bcomes from\b|\blives in\b",
    re.IGNORECASE,
)
HEDGES = re.compile(
    r"\bhas \d[\d,]* definitions\b|\b\d[\d,]* (?:candidates|definitions)\b|\bcandidates?\b"
    r"|\b(?:not sure|unsure|uncertain|ambiguous)\b|\bcan(?:not|'t) tell\b"
    r"|\bone of (?:these|them|the following)\b",
    re.IGNORECASE,
)
_LEAD_END = re.compile(r"(?<=[.;:!?])\s|\n")


@dataclass(frozen=True, slots=True)
class Reply:
    """What the scoring needs of an answer."""

    text: str
    mode: str
    citations: tuple[Span, ...]


@dataclass(frozen=True, slots=True)
class Verdict:
    first_in_gold: bool
    right_anywhere: bool
    covered: float  # share of gold ranges some citation overlaps (0 without gold)
    not_found: bool
    false_not_found: bool  # only with gold
    handled: bool  # not found, for unanswerable questions
    confidently_wrong: bool  # only for definition questions
    cites_decoy: bool


def lead(text: str) -> str:
    """The opening sentence, without markdown emphasis (and with plain apostrophes)."""
    stripped = text.replace("\u2019", "'").lstrip().lstrip("*_>#` ").lstrip()
    return _LEAD_END.split(stripped, maxsplit=1)[0]


def is_not_found(reply: Reply) -> bool:
    if reply.mode == "empty":
        return True
    opening = lead(reply.text)
    return opening.startswith(NOT_FOUND_SENTENCES) or NOT_FOUND_LEAD.match(opening) is not None


def prose(text: str) -> str:
    """The text before its first code block (with plain apostrophes)."""
    return text.split("```", 1)[0].replace("\u2019", "'")


def asserts_definition(text: str) -> bool:
    return ASSERTS_DEFINITION.search(prose(text)) is not None


def hedges(text: str) -> bool:
    return HEDGES.search(prose(text)) is not None


def score(case: AnswerCase, reply: Reply) -> Verdict:
    cites = tuple(c for c in reply.citations if not case.is_target(c))
    in_gold = [any(c.overlaps(g) for g in case.gold) for c in cites]
    first = bool(in_gold) and in_gold[0]
    anywhere = any(in_gold)
    not_found = is_not_found(reply)
    covered = (
        sum(any(c.overlaps(g) for c in cites) for g in case.gold) / len(case.gold)
        if case.gold
        else 0.0
    )
    decoy_first = bool(cites) and any(cites[0].overlaps(d) for d in case.decoys)
    wrong = (
        case.kind == "definition"
        and bool(case.gold)
        and bool(cites)
        and not not_found
        and not first
        and (decoy_first or asserts_definition(reply.text))
        and not (hedges(reply.text) and anywhere)
    )
    return Verdict(
        first_in_gold=first,
        right_anywhere=anywhere,
        covered=round(covered, 4),
        not_found=not_found,
        false_not_found=bool(case.gold) and (not_found or not reply.citations),
        handled=not case.gold and not_found,
        confidently_wrong=wrong,
        cites_decoy=any(c.overlaps(d) for c in cites for d in case.decoys),
    )


def same_reply(a: Reply, b: Reply) -> bool:
    return a.text == b.text and a.citations == b.citations


@dataclass(frozen=True, slots=True)
class Scored:
    """One case's verdict, and whether its answer changed with another repository indexed."""

    case: AnswerCase
    verdict: Verdict
    changed: bool
    ms: float


SUMMARY_HEADER = (
    "n",
    "first in gold",
    "right anywhere",
    "gold covered",
    "false not-found",
    "not-found handled",
    "confidently wrong",
    "cites a decoy",
    "changed w/ other repo",
)


def summary_row(rows: Sequence[Scored]) -> list[str]:
    """The SUMMARY_HEADER cells for a group of cases ("-" where a rule does not apply)."""
    answerable = [r for r in rows if r.case.gold]
    unanswerable = [r for r in rows if not r.case.gold]
    definitions = [r for r in answerable if r.case.kind == "definition"]
    with_decoys = [r for r in rows if r.case.decoys]
    covered = [r.verdict.covered for r in answerable]
    return [
        str(len(rows)),
        _count(answerable, "first_in_gold"),
        _count(answerable, "right_anywhere"),
        f"{sum(covered) / len(covered):.2f}" if covered else "-",
        _count(answerable, "false_not_found"),
        _count(unanswerable, "handled"),
        _count(definitions, "confidently_wrong"),
        _count(with_decoys, "cites_decoy"),
        _share(sum(r.changed for r in rows), len(rows)),
    ]


def _count(rows: Sequence[Scored], field: str) -> str:
    return _share(sum(bool(getattr(r.verdict, field)) for r in rows), len(rows))


def _share(k: int, n: int) -> str:
    return f"{k}/{n} ({round(100 * k / n)}%)" if n else "-"
