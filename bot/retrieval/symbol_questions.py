"""Recognise questions the symbol table answers exactly, and the symbol they name.

Four forms, each a small set of phrasings matched against the whole question
(never a search for keywords inside it, so "how does caching work?" stays an
ordinary question):

- definition: "where is `send` defined?", "find the definition of Session.send",
  "which file defines the Router class?", "where is `parse_args`?"
- callers: "who calls send?", "which functions call charge()?", "callers of X",
  "where is X called from?"
- references: "where is X used?", "what uses X?", "references to X", "who imports X?"
- overview: "how is this project organised?", "give me an overview of the codebase",
  "what are the main components?", "what is the flow of a request?", "map"

The named symbol may be wrapped in backticks, end in `()`, be dotted (`a.B.c`,
`A::b`, `A#b`) or come with a kind word ("the Router class", "function send").
A pronoun ("who calls it?") is resolved from an earlier clause or from the
lines after the first (where the core appends the previous question).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from bot.retrieval.preamble import without_preamble
from bot.retrieval.query import analyze, looks_like_identifier

SymbolQuestionKind = Literal["definition", "callers", "references", "overview"]

MAX_QUESTION_CHARS = 200  # a long message is an issue or a paste, not a lookup

_KIND = (
    r"(?:class|function|func|fn|method|def|struct|interface|trait|type|enum|module|constant"
    r"|const|variable|var|macro|symbol|property|attribute|field|decorator|constructor)"
)
_IDENT = r"[A-Za-z_$][\w$]*"
_QUALIFIED = rf"{_IDENT}(?:(?:\.|::|#|->){_IDENT})*"
_ARTICLE = r"(?:(?:the|a|an|our)\s+)?"
# The named symbol: `the Router class`, `function send`, `` `Session.send()` ``, `charge()`.
# "a schema's safeParse method": the owner is how people say it, the name is what is asked.
_OWNER = rf"(?:(?P<owner>{_IDENT})'s\s+)?"
_NAME = (
    rf"{_ARTICLE}{_OWNER}(?:(?P<kind1>{_KIND})\s+)?"
    rf"(?P<tick>`?)(?P<name>{_QUALIFIED})(?P<call1>\([^()`\n]{{0,40}}\))?(?P=tick)"
    rf"(?P<call2>\(\))?(?:\s+(?P<kind2>{_KIND}))?"
)
_WE = r"(?:we|they|you|i|people|the\s+code|this\s+(?:code|repo|project)|it)"
_SUBJECT = (
    r"(?:who|what|which\s+(?:functions?|methods?|code|files?|modules?|classes|places|tests?"
    r"|callers?|components?|parts\s+of\s+the\s+code|services?|packages?|scripts?))"
    r"(?:\s+else)?"
)
_FIND = (
    r"(?:(?:find|show|list|get|give|what\s+are|which\s+are)\s+(?:me\s+)?)?(?:all\s+)?(?:the\s+)?"
)
_SCOPE = (
    r"(?:this|the|our|your)\s+(?:project|repo|repository|codebase|code\s*base|code|app"
    r"|application|system|service|library|package|source(?:\s+code)?)"
)
# "how does this code work?" is about code on screen, not the whole project
_SCOPE_WHOLE = (
    r"(?:this|the|our|your)\s+(?:project|repo|repository|codebase|code\s*base|app|application"
    r"|system|service|library)"
)
_REPO = r"(?P<repo>[\w.-]+)"
_SCOPE_OR_REPO = rf"(?:{_SCOPE}|{_REPO})"

_DEFINITION = (
    rf"where(?:\s+(?:is|are|was)|'s)\s+{_NAME}\s+(?:defined|declared|implemented|located|written)",
    rf"where\s+{_NAME}\s+(?:is|are)\s+(?:defined|declared|implemented|located|written)",
    # "where is the State class used by the typer command defined?"
    rf"where(?:\s+(?:is|are|was)|'s)\s+{_NAME}\s+(?:that\s+(?:is|are)\s+)?(?:used|called"
    rf"|created|made|returned)\s+(?:by|in|from|for)\s+[\w\s./'-]{{1,60}}?\s+(?:defined|declared"
    rf"|implemented)",
    rf"where\s+(?:do|does|did)\s+{_WE}\s+(?:define|declare|implement)\s+{_NAME}",
    rf"where\s+does\s+{_NAME}\s+(?:get\s+(?:defined|declared|implemented)|live|reside)",
    rf"{_FIND}(?:definition|declaration|implementation|source(?:\s+code)?)\s+(?:of|for)\s+{_NAME}",
    rf"(?:go|jump)\s+to\s+(?:the\s+)?definition\s+(?:of\s+)?{_NAME}",
    rf"(?:find|show\s+me|where\s+is)\s+{_NAME}'s\s+(?:definition|declaration|implementation)",
    rf"(?:which|what)\s+(?:file|module|package|class)\s+(?:defines|declares|implements|contains"
    rf"|has)\s+{_NAME}",
    rf"(?:in\s+)?(?:which|what)\s+(?:file|module|package)\s+(?:is|are)\s+{_NAME}"
    rf"(?:\s+(?:defined|declared|implemented))?(?:\s+in)?",
)
# Without a verb, only a name that is clearly code ("where is `send`?") makes a lookup.
_DEFINITION_IF_CODE = (
    rf"where(?:\s+(?:is|are)|'s)\s+{_NAME}",
    rf"where\s+can\s+(?:i|we|one)\s+find\s+{_NAME}",
    rf"where\s+(?:does|do)\s+{_NAME}\s+come\s+from",
)
_CALLERS = (
    rf"{_SUBJECT}\s+(?:calls?|invokes?)\s+{_NAME}",
    rf"(?:who|what)\s+(?:is|are)\s+(?:calling|invoking)\s+{_NAME}",
    rf"{_FIND}(?:callers?|call[\s-]?sites?|invocations?|calls)\s+(?:of|to|for|into)\s+{_NAME}",
    rf"{_FIND}(?:places|functions|methods|code)\s+(?:that|which)\s+(?:calls?|invokes?)\s+{_NAME}",
    rf"where(?:\s+(?:is|are)|'s)\s+{_NAME}\s+(?:called|invoked)(?:\s+from)?",
    rf"where\s+{_NAME}\s+(?:is|are)\s+(?:called|invoked)(?:\s+from)?",
    rf"where\s+(?:do|does|did)\s+{_WE}\s+(?:call|invoke)\s+{_NAME}",
    rf"where\s+does\s+{_NAME}\s+get\s+(?:called|invoked)(?:\s+from)?",
    rf"(?:is|does)\s+(?:anything|anyone|anybody|something)\s+(?:call|invoke)\s+{_NAME}",
    rf"(?:is|are)\s+{_NAME}\s+(?:ever\s+)?(?:called|invoked)",
)
_REFERENCES = (
    rf"{_SUBJECT}\s+(?:uses?|references?|imports?|depends?\s+on|reads?)\s+{_NAME}",
    rf"(?:who|what)\s+(?:is|are)\s+(?:using|referencing|importing)\s+{_NAME}",
    rf"{_FIND}(?:references?|usages?|uses|occurrences?|mentions?|importers?)\s+(?:of|to|for)"
    rf"\s+{_NAME}",
    rf"where(?:\s+(?:is|are)|'s)\s+{_NAME}\s+(?:used|referenced|imported|mentioned|accessed|read)",
    rf"where\s+{_NAME}\s+(?:is|are)\s+(?:used|referenced|imported|mentioned|accessed|read)",
    rf"where\s+(?:do|does|did)\s+{_WE}\s+(?:use|reference|import)\s+{_NAME}",
    rf"where\s+does\s+{_NAME}\s+get\s+(?:used|referenced|imported)",
    rf"(?:is|does)\s+(?:anything|anyone|anybody|something)\s+(?:use|reference|import)\s+{_NAME}",
    rf"(?:is|are)\s+{_NAME}\s+(?:ever\s+)?(?:used|referenced|imported)",
)
_OVERVIEW = (
    rf"how\s+(?:is|are)\s+{_SCOPE_OR_REPO}\s+(?:organi[sz]ed|structured|laid\s+out|architected"
    rf"|arranged|put\s+together|designed|built)",
    rf"how\s+(?:does|do)\s+{_SCOPE_OR_REPO}\s+(?:fit|hang)\s+together",
    rf"how\s+does\s+{_SCOPE_WHOLE}\s+work",
    rf"what\s+does\s+{_SCOPE_WHOLE}\s+do",
    rf"(?:(?:what\s+is|what's|describe|explain|show\s+me|give\s+me|summari[sz]e"
    rf"|walk\s+me\s+through)\s+)?(?:the\s+)?(?:overall\s+|high[-\s]level\s+|general\s+)?(?:architecture|structure|layout"
    rf"|organi[sz]ation|design|directory\s+(?:structure|layout|tree)|folder\s+structure)"
    rf"(?:\s+(?:of|in|for)\s+{_SCOPE_OR_REPO})?",
    rf"(?:(?:give|show)\s+me\s+|can\s+(?:i|we)\s+(?:get|have|see)\s+|i\s+(?:want|need|'d\s+like)"
    rf"\s+)?(?:an?\s+)?(?:quick\s+|brief\s+|short\s+|high[-\s]level\s+|general\s+)?"
    rf"(?:overview|tour|outline|bird'?s[-\s]eye\s+view)(?:\s+(?:of|for)\s+{_SCOPE_OR_REPO})?",
    rf"(?:(?:give|show)\s+me\s+)?(?:an?\s+|the\s+)?(?:summary|map)\s+of\s+{_SCOPE_OR_REPO}",
    rf"(?:what|which)\s+are\s+the\s+(?:main|key|major|core|important|most\s+important|top[-\s]level"
    rf"|primary|central)\s+(?:components|modules|parts|pieces|packages|classes|building\s+blocks"
    rf"|abstractions|directories|folders|files|entry\s+points|subsystems|layers|symbols)"
    rf"(?:\s+(?:of|in)\s+{_SCOPE_OR_REPO})?",
    rf"what\s+is\s+the\s+(?:flow|lifecycle|life\s+cycle|path)\s+of\s+an?\s+request"
    rf"(?:\s+(?:in|through)\s+{_SCOPE})?",
    r"(?:what\s+is|describe|explain)\s+the\s+request\s+(?:flow|lifecycle|life\s+cycle)",
    rf"how\s+does\s+an?\s+request\s+flow(?:\s+through\s+{_SCOPE})?",
    rf"where\s+(?:should|do|can)\s+(?:i|we)\s+start(?:\s+reading)?(?:\s+(?:in\s+)?{_SCOPE})?",
    rf"(?:repo(?:sitory)?\s+|code\s*base\s+|project\s+)?map(?:\s+(?:of\s+)?{_REPO})?",
)

_LEAD = re.compile(
    r"^(?:(?:hey|hi|ok|okay|so|and|also|now|then|quick\s+question|question)\b[,:]?\s+)*"
    r"(?:please\s+)?(?:(?:can|could|would|will)\s+(?:you|someone)\s+(?:please\s+)?)?"
    r"(?:(?:tell|show|remind)\s+me\s+(?=where|who|what|which|how|the|all)|let\s+me\s+know\s+"
    r"|(?:do\s+you|does\s+anyone)\s+know\s+|i\s+(?:want|need|would\s+like|'d\s+like)\s+to\s+"
    r"(?:know|see|find(?:\s+out)?)\s+)?",
    re.IGNORECASE,
)
_TAIL = (
    r"(?:\s+(?:in|inside|within|under|across|throughout)\s+(?:the\s+|this\s+|our\s+)?"
    r"(?P<where>[\w./-]+)(?:\s+(?:module|file|package|directory|folder|dir|repo|repository"
    r"|codebase|project|code))?)?(?:\s+(?:anywhere|at\s+all|else|exactly))?"
    # "..., the one that reads a string flag?": which of them is meant, said after the name
    r"(?P<which>\s*,\s*(?:the\s+one|one|which|that)\s+[^?]{0,80}?)?"
    r"(?:\s*,?\s*(?:please|pls|thanks|thank\s+you))?[\s?.!:]*"
)
_CLAUSES = re.compile(
    r"(?:,|[?.!])?\s+and\s+(?=who|what|which|where|how|is|does|are)|[?;.!]\s+", re.IGNORECASE
)
# "in an Action I call cmd.Bool(...), where is Bool defined?": the question after the comma
_AFTER_COMMA = re.compile(r",\s+(?=(?:where|who|which)\s)", re.IGNORECASE)

_PRONOUNS = frozenset({"it", "this", "that", "them", "these", "those", "its", "one"})
_NOT_NAMES = frozenset(
    """something anything everything nothing someone anyone code stuff what which who where
    there here all any some thing things file files function functions method methods class
    classes everywhere other others same is are was were be been the a an and or of to in on
    for with from by""".split()
)
_SCOPE_WORDS = frozenset(
    """codebase code project repo repository app application system service library package
    source base""".split()
)


@dataclass(frozen=True, slots=True)
class SymbolQuestion:
    """What a question asks of the symbol table."""

    kind: SymbolQuestionKind
    name: str = ""  # "" for an overview; dotted for qualified names ("Session.send")
    # The name is clearly code (backticks, `()`, dotted, snake_case or camelCase, a kind word):
    # then a name the table does not know is worth saying so. A capitalised word alone
    # ("Session", "API") is looked up, but silently falls back when unknown.
    explicit: bool = False
    symbol_kind: str = ""  # a kind word the question used ("class", "function"), normalised
    where: str = ""  # a path, directory or repository the question narrows to ("in billing.py")
    # Recognised by a lenient reading (a clause after a comma, an owner's possessive, "...,
    # the one that ..." after the name): a name the table does not know then falls back to
    # search rather than "I found no definition", as such questions did before.
    lenient: bool = False

    @property
    def last(self) -> str:
        """The name's last segment: what references record."""
        return self.name.rsplit(".", 1)[-1]


_GROUPS: tuple[tuple[SymbolQuestionKind, bool, tuple[str, ...]], ...] = (
    ("callers", False, _CALLERS),
    ("references", False, _REFERENCES),
    ("definition", False, _DEFINITION),
    ("definition", True, _DEFINITION_IF_CODE),  # True: only when the name is clearly code
    ("overview", False, _OVERVIEW),
)
_FORMS: tuple[tuple[SymbolQuestionKind, bool, re.Pattern[str]], ...] = tuple(
    (kind, needs_code, re.compile(rf"(?:{pattern}){_TAIL}", re.IGNORECASE))
    for kind, needs_code, patterns in _GROUPS
    for pattern in patterns
)
_RICHNESS = {"overview": 0, "definition": 1, "references": 2, "callers": 3}


def detect_symbol_question(text: str) -> SymbolQuestion | None:
    """The symbol question in `text`'s first line, or None for an ordinary question.

    Later lines are context only (the core appends the previous question to a
    short follow-up): they resolve a pronoun such as "who calls it?".
    """
    first, _, context = text.strip().replace("\u2019", "'").partition("\n")
    first = without_preamble(first).strip()  # "I'm new here: ..." asks what follows
    if not first or len(first) > MAX_QUESTION_CHARS:
        return None
    found: SymbolQuestion | None = None
    for clause, lenient in _clauses(first):
        q = _detect_clause(clause, lenient=lenient)
        if q is None:
            continue
        if q.name.lower() in _PRONOUNS:
            referent = found.name if found is not None and found.name else _referent(context)
            if not referent:
                continue
            q = SymbolQuestion(q.kind, referent, True, q.symbol_kind, q.where)
        if found is None or _RICHNESS[q.kind] > _RICHNESS[found.kind]:
            found = q
    return found


def _clauses(first: str) -> list[tuple[str, bool]]:
    """The question's clauses; one that is a question only after a comma ("in an Action I
    call cmd.Bool(), where is Bool defined?") is read leniently (see `_from_match`)."""
    out: list[tuple[str, bool]] = []
    for clause in _CLAUSES.split(first):
        parts = _AFTER_COMMA.split(clause)
        out.append((parts[0], False))
        out += [(part, True) for part in parts[1:]]
    return out


def _detect_clause(clause: str, *, lenient: bool = False) -> SymbolQuestion | None:
    clause = _LEAD.sub("", clause.strip(), count=1)
    for kind, needs_code, pattern in _FORMS:
        m = pattern.fullmatch(clause)
        if m is None:
            continue
        q = _from_match(kind, m, lenient=lenient)
        if q is not None and (not needs_code or q.explicit or q.name[:1].isupper()):
            return q
    return None


def _from_match(
    kind: SymbolQuestionKind, m: re.Match[str], *, lenient: bool = False
) -> SymbolQuestion | None:
    """The question a form matched (`lenient`: see `SymbolQuestion.lenient`)."""
    groups = m.groupdict()
    lenient = lenient or bool(groups.get("owner") or groups.get("which"))
    where = groups.get("where") or ""
    where = "" if where.lower() in _SCOPE_WORDS else where.rstrip(".")
    if kind == "overview":
        repo = groups.get("repo") or ""
        if repo.lower() in _SCOPE_WORDS or repo.lower() in _NOT_NAMES:
            repo = ""
        return SymbolQuestion("overview", where=repo or where)
    raw = groups["name"]
    name = re.sub(r"::|#|->", ".", raw).strip(".")
    symbol_kind = (groups.get("kind1") or groups.get("kind2") or "").lower()
    if name.lower() in _PRONOUNS:
        return SymbolQuestion(kind, name.lower(), True, _normal_kind(symbol_kind), where)
    if name.lower() in _NOT_NAMES or len(name) < 2:
        return None
    explicit = bool(
        groups.get("tick")
        or groups.get("call1")
        or groups.get("call2")
        or symbol_kind
        or "." in name
        or looks_like_identifier(name)
    )
    return SymbolQuestion(kind, name, explicit, _normal_kind(symbol_kind), where, lenient)


def _normal_kind(word: str) -> str:
    return {"func": "function", "fn": "function", "def": "function", "const": "constant"}.get(
        word, "variable" if word == "var" else word
    )


def _referent(context: str) -> str:
    """The symbol an earlier question was about: its lookup name, else its first identifier."""
    for line in context.splitlines():
        line = line.strip()
        if not line:
            continue
        earlier = detect_symbol_question(line)
        if earlier is not None and earlier.name and earlier.name.lower() not in _PRONOUNS:
            return earlier.name
        symbols = analyze(line).symbols
        if symbols:
            return symbols[0]
    return ""
