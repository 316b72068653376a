"""Holdout check of the secret scrubber against public scanners' own test samples.

Reads, at run time, the sample secrets (true positives) and known false
positives that public secret scanners keep in their test data, runs
`bot.ingest.secrets.scrub` on each, and reports how many true positives
survive and how many false positives get redacted. Nothing fetched is
stored in this repository: give each scanner's git directory (or checkout)
on the command line.

    python bench/secrets_holdout.py --gitleaks /work/.mirror/gitleaks+gitleaks/repo \\
        --detect-secrets /work/.mirror/Yelp+detect-secrets/repo \\
        --trufflehog /work/.mirror/trufflesecurity+trufflehog/repo --code /work/wt-secrets

Sources and what is taken from them:

- gitleaks `cmd/generate/config/rules/*.go`: the `tps` / `fps` of each rule.
  Go string literals ("..." and `...`), `+` between them, names bound to such
  literals in the same function or file, `append`, `map[string]string`
  (key = file path), `strings.Repeat`, `fmt.Sprintf` with %s/%v, and
  `utils.GenerateSampleSecret(s)` when their arguments are literal (the
  templates are read from gitleaks' own `utils/generate.go`). Anything built
  by `secrets.NewSecret` (random strings drawn from a regex) is skipped and
  counted.
- detect-secrets `tests/plugins/*_test.py`: `pytest.mark.parametrize` lists
  of `(line|payload, should_flag)`, the keyword plugin's
  `(file_extension, line, expected_secret)` tables and the entropy plugin's
  `(plugin, non_secret, secret)` triples, evaluated with a small AST
  evaluator (constants, `+`, `%`, `.format`, f-strings, slices,
  `textwrap.dedent`); nothing is imported or executed.
- trufflehog `pkg/detectors/**/*_test.go`: the pattern tests' table entries
  `{input: ..., want: []string{...} | nil}`; `want` empty or nil is a
  negative. (Trufflehog's negatives are often near-miss tokens - wrong length
  or alphabet - so a scrubber redacting them is cheap; they are reported
  apart.)

Scoring, per sample and per path context (`--path`, plus the sample's own
path where the source gives one):

- strict: a true positive is KEPT when `[REDACTED]` does not appear in the
  output at all.
- leak: a true positive is KEPT when a secret-looking part survives verbatim:
  the secret the source names (gitleaks' `GenerateSampleSecret(s)` argument,
  detect-secrets' `expected_secret`, trufflehog's `want`) or, when it names
  none, every token-like run of the input (>= 12 characters of
  `[A-Za-z0-9+/=_-]` with a letter, a digit and >= 3 bits of entropy). A
  part survives when it is in the output whole, or when a piece of it of
  >= 12 characters that itself looks like a token is. With no such part the
  strict verdict stands.
- a false positive is REDACTED when the output differs from the input.

Printed samples are cut to 80 characters and token-like runs are masked.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import math
import re
import subprocess
import sys
import textwrap
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

REDACTED = "[REDACTED]"
DEFAULT_PATHS = ("config/settings.py", "deploy.sh", ".github/workflows/ci.yml")


@dataclass(frozen=True)
class Sample:
    source: str
    rule: str  # gitleaks rule id, detect-secrets plugin, trufflehog detector dir
    text: str
    positive: bool
    secrets: tuple[str, ...] = ()  # the secret(s) the source names, when it does
    path: str | None = None  # the path the source tests it under, when it does
    variant: str = ""  # gitleaks template name, trufflehog case name


@dataclass
class Extraction:
    samples: list[Sample] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)  # reason -> count
    commit: str = ""
    check: str = ""  # a consistency check of the parse, in words


class Unparsed(Exception):
    """An expression this reader does not evaluate (the sample is skipped)."""


# ---------------------------------------------------------------- reading a repository


def read_tree(root: Path, prefix: str, suffix: str) -> tuple[str, dict[str, str]]:
    """(commit, {path: text}) of the files under `prefix` ending in `suffix`."""
    git = ["git", f"--git-dir={root}"]
    if subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True).returncode != 0:
        if (root / ".git").exists():
            git = ["git", "-C", str(root)]
        else:  # a plain directory
            files = sorted(p for p in (root / prefix).rglob(f"*{suffix}") if p.is_file())
            found = {str(p.relative_to(root)): p.read_text("utf-8", "replace") for p in files}
            return "(directory)", found
    commit = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    names = subprocess.run(
        [*git, "ls-tree", "-r", "--name-only", "HEAD", "--", prefix],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    names = [n for n in names if n.endswith(suffix)]
    request = "".join(f"HEAD:{n}\n" for n in names).encode()
    blob = subprocess.run(
        [*git, "cat-file", "--batch"], input=request, capture_output=True, check=True
    ).stdout
    texts: dict[str, str] = {}
    at = 0
    for name in names:
        header_end = blob.index(b"\n", at)
        size = int(blob[at:header_end].split()[2])
        texts[name] = blob[header_end + 1 : header_end + 1 + size].decode("utf-8", "replace")
        at = header_end + 1 + size + 1
    return commit.strip()[:12], texts


# ---------------------------------------------------------------- a small Go reader

_GO_TOKEN = re.compile(
    r"(?P<nl>\n)|(?P<ws>[ \t\r\f]+)|(?P<lc>//[^\n]*)|(?P<bc>/\*.*?\*/)"
    r"|(?P<raw>`[^`]*`)|(?P<str>\"(?:[^\"\\\n]|\\.)*\")|(?P<rune>'(?:[^'\\\n]|\\.)*')"
    r"|(?P<id>[^\W\d]\w*)|(?P<num>\d[\w.]*)"
    r"|(?P<op>\.\.\.|:=|==|!=|<=|>=|&&|\|\||\+=|-=|<-|\+\+|--|.)",
    re.S,
)
_GO_ESCAPE = re.compile(
    r"\\(?:x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|([0-7]{3})|(.))"
)
_GO_SIMPLE = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


@dataclass(frozen=True)
class Tok:
    kind: str  # nl, raw, str, rune, id, num, op
    text: str

    @property
    def value(self) -> str:
        if self.kind == "raw":
            return self.text[1:-1].replace("\r", "")
        return _GO_ESCAPE.sub(_go_unescape, self.text[1:-1])


def _go_unescape(m: re.Match[str]) -> str:
    hexa, u4, u8, octal, simple = m.groups()
    if hexa or octal:  # a byte; the samples are ASCII in practice
        return chr(int(hexa, 16) if hexa else int(octal, 8))
    if u4 or u8:
        return chr(int(u4 or u8, 16))
    return _GO_SIMPLE.get(simple, simple)


def go_tokens(source: str) -> list[Tok]:
    tokens: list[Tok] = []
    for m in _GO_TOKEN.finditer(source):
        kind = m.lastgroup or "op"
        if kind in ("ws", "lc"):
            continue
        if kind == "bc":
            if "\n" in m.group():
                tokens.append(Tok("nl", "\n"))
            continue
        tokens.append(Tok(kind, m.group()))
    return tokens


_OPEN, _CLOSE = "([{", ")]}"
_CONTINUES = {"+", ",", "(", "[", "{", "=", ":=", ":", "||", "&&"}


def close_of(toks: list[Tok], i: int) -> int:
    """Index of the bracket closing the one at `i`."""
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j]
        if t.kind == "op" and t.text in _OPEN:
            depth += 1
        elif t.kind == "op" and t.text in _CLOSE:
            depth -= 1
            if depth == 0:
                return j
    raise Unparsed("unbalanced brackets")


def expr_end(toks: list[Tok], i: int) -> int:
    """End (exclusive) of the expression starting at `i`."""
    j = i
    while j < len(toks):
        t = toks[j]
        if t.kind == "op" and t.text in _OPEN:
            j = close_of(toks, j) + 1
            continue
        if t.kind == "op" and t.text in (",", ";", ")", "]", "}"):
            return j
        if t.kind == "nl" and (j == i or toks[j - 1].text not in _CONTINUES):
            next_real = next((k for k in range(j, len(toks)) if toks[k].kind != "nl"), j)
            if next_real >= len(toks) or toks[next_real].text not in ("+", "."):
                return j
        j += 1
    return j


def split_top(toks: list[Tok], sep: str = ",") -> list[list[Tok]]:
    """Split a bracket's contents at top-level `sep`, dropping newlines."""
    parts: list[list[Tok]] = [[]]
    depth = 0
    for t in toks:
        if t.kind == "op" and t.text in _OPEN:
            depth += 1
        elif t.kind == "op" and t.text in _CLOSE:
            depth -= 1
        if depth == 0 and t.kind == "op" and t.text == sep:
            parts.append([])
        elif t.kind != "nl":
            parts[-1].append(t)
    return [p for p in parts if p]


def qualified(toks: list[Tok], i: int) -> tuple[str, int]:
    """`a.b.c` starting at `i`: (name, index after it)."""
    name, j = toks[i].text, i + 1
    while j + 1 < len(toks) and toks[j].text == "." and toks[j + 1].kind == "id":
        name, j = f"{name}.{toks[j + 1].text}", j + 2
    return name, j


@dataclass(frozen=True)
class Found:
    text: str
    secrets: tuple[str, ...] = ()
    path: str | None = None
    variant: str = ""


class GoScope:
    """Names bound to expressions in one function (falling back to the file)."""

    def __init__(self, toks: list[Tok], parent: GoScope | None, depth_limit: int | None) -> None:
        self.parent = parent
        self.slices: dict[str, list[list[Tok]]] = defaultdict(list)
        self.cache: dict[str, str] = {}
        self.busy: set[str] = set()
        brace = 0
        for i, t in enumerate(toks):
            if t.kind == "op" and t.text == "{":
                brace += 1
            elif t.kind == "op" and t.text == "}":
                brace -= 1
            if depth_limit is not None and brace > depth_limit:
                continue
            if t.kind != "id" or (
                i and toks[i - 1].text not in ("\n", "(", ";", "{", "var", "const")
            ):
                continue
            j = i + 1
            if j < len(toks) and toks[j].kind == "id" and toks[j].text in ("string",):
                j += 1  # var name string = ...
            if j < len(toks) and toks[j].text in (":=", "="):
                self.slices[t.text].append(toks[j + 1 : expr_end(toks, j + 1)])

    def bound(self, name: str) -> list[list[Tok]]:
        """The expressions `name` is bound to in the nearest scope binding it."""
        if name in self.slices:
            return self.slices[name]
        return self.parent.bound(name) if self.parent is not None else []

    def lookup(self, name: str, helpers: GoHelpers) -> str:
        if name in self.cache:
            return self.cache[name]
        bound = self.slices.get(name)
        if not bound:
            if self.parent is not None:
                return self.parent.lookup(name, helpers)
            raise Unparsed(f"name {name}")
        if name in self.busy:
            raise Unparsed(f"recursive name {name}")
        self.busy.add(name)
        try:
            values = {helpers.scalar(s, self) for s in bound}
        finally:
            self.busy.discard(name)
        if len(values) != 1:
            raise Unparsed(f"name {name} bound to several values")
        self.cache[name] = values.pop()
        return self.cache[name]


class GoHelpers:
    """Evaluates the literal-only Go expressions found in scanners' tests."""

    def __init__(self, templates: dict[str, str], single_template: str | None) -> None:
        self.templates = templates  # gitleaks GenerateSampleSecrets, name -> "{i}..{s}"
        self.single_template = single_template  # gitleaks GenerateSampleSecret's format

    def scalar(self, toks: list[Tok], scope: GoScope) -> str:
        found = self.collect(toks, scope)
        if len(found) == 1 and isinstance(found[0], str):
            raise Unparsed(found[0])
        if len(found) != 1 or isinstance(found[0], str):
            raise Unparsed("not a single string")
        return found[0].text

    def collect(self, toks: list[Tok], scope: GoScope) -> list[Found | str]:
        """Samples an expression yields; a str in the list is the reason one was skipped."""
        toks = [t for t in toks if t.kind != "nl"]
        if toks and toks[-1].text == "...":
            toks = toks[:-1]
        try:
            return self._collect(toks, scope)
        except Unparsed as exc:
            return [str(exc)]

    def _collect(self, toks: list[Tok], scope: GoScope) -> list[Found | str]:
        if not toks:
            raise Unparsed("empty")
        head = toks[0]
        if head.text == "[" or (head.kind == "id" and head.text == "map"):
            return self._composite(toks, scope)
        if head.kind == "id":
            name, j = qualified(toks, 0)
            if j < len(toks) and toks[j].text == "(" and close_of(toks, j) == len(toks) - 1:
                args = split_top(toks[j + 1 : -1])
                if name == "append":  # tps = append(tps, more...): tps is the list assigned
                    lists = args[1:] if [t.text for t in args[0]] in (["tps"], ["fps"]) else args
                    return [f for a in lists for f in self.collect(a, scope)]
                if name.endswith("GenerateSampleSecrets"):
                    ident, secret = (self.scalar(a, scope) for a in args)
                    return self._expand(ident, secret)
            bound = scope.bound(name) if j == len(toks) else []
            if len(bound) == 1 and name not in scope.busy:  # a name for a list, or a string
                scope.busy.add(name)
                try:
                    return self.collect(bound[0], scope)
                finally:
                    scope.busy.discard(name)
        parts = split_top(toks, "+")
        texts = [self._term(p, scope) for p in parts]
        secrets = tuple(s for _, s in texts if s)
        return [Found("".join(t for t, _ in texts), secrets)]

    def _composite(self, toks: list[Tok], scope: GoScope) -> list[Found | str]:
        brace = next(i for i, t in enumerate(toks) if t.text == "{")
        if close_of(toks, brace) != len(toks) - 1:
            raise Unparsed("composite followed by more")
        out: list[Found | str] = []
        is_map = toks[0].text == "map"
        for element in split_top(toks[brace + 1 : -1]):
            if not is_map:
                out += self.collect(element, scope)
                continue
            key_value = split_top(element, ":")
            if len(key_value) != 2:
                out.append("map element")
                continue
            try:
                path = self.scalar(key_value[0], scope)
            except Unparsed as exc:
                out.append(str(exc))
                continue
            for f in self.collect(key_value[1], scope):
                out.append(f if isinstance(f, str) else Found(f.text, f.secrets, path, f.variant))
        return out

    def _term(self, toks: list[Tok], scope: GoScope) -> tuple[str, str]:
        """(text, secret named by a helper call or '')."""
        if len(toks) == 1 and toks[0].kind in ("str", "raw"):
            return toks[0].value, ""
        if toks[0].kind != "id":
            raise Unparsed(f"token {toks[0].text!r}")
        name, j = qualified(toks, 0)
        if j == len(toks):
            return scope.lookup(name, self), ""
        if toks[j].text != "(" or close_of(toks, j) != len(toks) - 1:
            raise Unparsed(f"expression after {name}")
        args = split_top(toks[j + 1 : -1])
        short = name.rsplit(".", 1)[-1]
        if short == "NewSecret":
            raise Unparsed("generated (secrets.NewSecret)")
        if short == "GenerateSampleSecret" and self.single_template is not None:
            ident, secret = (self.scalar(a, scope) for a in args)
            return _sprintf(self.single_template, [ident, secret]), secret
        if name == "fmt.Sprintf":
            values = [self.scalar(a, scope) for a in args]
            return _sprintf(values[0], values[1:]), ""
        if name == "strings.Repeat" and len(args) == 2 and args[1][0].kind == "num":
            return self.scalar(args[0], scope) * int(args[1][0].text), ""
        raise Unparsed(f"call {short}")

    def _expand(self, ident: str, secret: str) -> list[Found | str]:
        if not self.templates:
            raise Unparsed("no GenerateSampleSecrets templates")
        marks = {"{i}": ident, "{I}": ident.upper(), "{s}": secret}
        return [
            Found(re.sub(r"\{[iIs]\}", lambda m: marks[m.group()], form), (secret,), None, name)
            for name, form in sorted(self.templates.items())
        ]


def _sprintf(form: str, args: list[str]) -> str:
    it = iter(args)

    def put(m: re.Match[str]) -> str:
        if m.group() == "%%":
            return "%"
        if m.group() not in ("%s", "%v"):
            raise Unparsed(f"format {m.group()}")
        try:
            return next(it)
        except StopIteration:
            raise Unparsed("format arguments") from None

    return re.sub(r"%[-+# 0-9.]*[a-zA-Z%]", put, form)


def go_functions(toks: list[Tok]) -> Iterator[tuple[str, list[Tok]]]:
    """(name, body tokens) of each top-level func."""
    brace, i = 0, 0
    while i < len(toks):
        t = toks[i]
        if t.text == "{":
            brace += 1
        elif t.text == "}":
            brace -= 1
        elif t.kind == "id" and t.text == "func" and brace == 0:
            j, name, paren = i + 1, "", 0
            while j < len(toks) and not (toks[j].text == "{" and paren == 0):
                if toks[j].text == "(":
                    paren += 1
                elif toks[j].text == ")":
                    paren -= 1
                elif toks[j].kind == "id" and not name and paren == 0:
                    name = toks[j].text
                j += 1
            if j >= len(toks):
                return
            end = close_of(toks, j)
            yield name, toks[j + 1 : end]
            i = end + 1
            continue
        i += 1


# ---------------------------------------------------------------- gitleaks


def gitleaks_helpers(texts: dict[str, str]) -> GoHelpers:
    toks = go_tokens(texts.get("cmd/generate/config/utils/generate.go", ""))
    templates: dict[str, str] = {}
    single: str | None = None
    for name, body in go_functions(toks):
        if name == "GenerateSampleSecrets":
            at = next((i for i, t in enumerate(body) if t.text == "map"), None)
            if at is not None:
                brace = next(i for i in range(at, len(body)) if body[i].text == "{")
                for element in split_top(body[brace + 1 : close_of(body, brace)]):
                    kv = split_top(element, ":")
                    if len(kv) == 2 and all(
                        len(p) == 1 and p[0].kind in ("str", "raw") for p in kv
                    ):
                        templates[kv[0][0].value] = kv[1][0].value
        if name == "GenerateSampleSecret":
            strs = [t for t in body if t.kind in ("str", "raw")]
            single = strs[0].value if strs else None
    return GoHelpers(templates, single)


def extract_gitleaks(root: Path) -> Extraction:
    prefix = "cmd/generate/config"
    commit, texts = read_tree(root, prefix, ".go")
    result = Extraction(commit=commit)
    helpers = gitleaks_helpers(texts)
    per_generated = max(len(helpers.templates), 1)
    checked = held = 0
    for path, text in sorted(texts.items()):
        if not path.startswith(f"{prefix}/rules/") or path.endswith("_test.go"):
            continue
        toks = go_tokens(text)
        file_scope = GoScope(toks, None, depth_limit=0)
        for func, body in go_functions(toks):
            scope = GoScope(body, file_scope, depth_limit=None)
            rule = _rule_id(body) or func
            keywords = _rule_keywords(body, helpers, scope)
            for i, t in enumerate(body):
                if t.kind != "id" or t.text not in ("tps", "fps") or body[i - 1].kind != "nl":
                    continue
                if i + 1 >= len(body) or body[i + 1].text not in (":=", "="):
                    continue
                rhs = body[i + 2 : expr_end(body, i + 2)]
                generated_samples = _is_generate_many(rhs)
                for found in helpers.collect(rhs, scope):
                    if isinstance(found, str):
                        result.skipped[found] += 1
                        if generated_samples:
                            result.skipped["(samples behind skipped GenerateSampleSecrets)"] += (
                                per_generated
                            )
                        continue
                    result.samples.append(
                        Sample("gitleaks", rule, found.text, t.text == "tps", found.secrets,
                               found.path, found.variant)
                    )  # fmt: skip
                    if t.text == "tps" and keywords:
                        checked += 1
                        held += any(k in found.text.lower() for k in keywords)
    result.check = f"{held} of {checked} TPs hold a Keyword of their rule (gitleaks requires it)"
    return result


def _rule_keywords(body: list[Tok], helpers: GoHelpers, scope: GoScope) -> list[str]:
    """The rule's `Keywords: []string{...}`, lower-cased; [] when absent or not literal."""
    for i in range(len(body) - 2):
        if body[i].text == "Keywords" and body[i + 1].text == ":":
            found = helpers.collect(body[i + 2 : expr_end(body, i + 2)], scope)
            return [f.text.lower() for f in found if isinstance(f, Found)]
    return []


def _rule_id(body: list[Tok]) -> str | None:
    for i in range(len(body) - 2):
        if body[i].text == "RuleID" and body[i + 1].text == ":" and body[i + 2].kind == "str":
            return body[i + 2].value
    return None


def _is_generate_many(rhs: list[Tok]) -> bool:
    return any(t.text.endswith("GenerateSampleSecrets") for t in rhs[:8])


# ---------------------------------------------------------------- trufflehog


def extract_trufflehog(root: Path) -> Extraction:
    commit, texts = read_tree(root, "pkg/detectors", "_test.go")
    result = Extraction(commit=commit)
    helpers = GoHelpers({}, None)
    for path, text in sorted(texts.items()):
        if path.endswith("_integration_test.go"):
            continue
        provider = path.removeprefix("pkg/detectors/").rsplit("/", 1)[0]
        toks = go_tokens(text)
        file_scope = GoScope(toks, None, depth_limit=0)
        for _func, body in go_functions(toks):
            scope = GoScope(body, file_scope, depth_limit=None)
            for i, t in enumerate(body):
                if t.text == "{":
                    _truffle_case(body[i + 1 : close_of(body, i)], scope, helpers, provider, result)
    wants = [(w, s.text) for s in result.samples for w in s.secrets]
    inside = sum(w in text for w, text in wants)
    result.check = f"{inside} of {len(wants)} `want` strings are verbatim in their input"
    result.check += " (the rest join several parts, as detectors' RawV2 does)"
    return result


def _truffle_case(
    toks: list[Tok], scope: GoScope, helpers: GoHelpers, provider: str, result: Extraction
) -> None:
    fields: dict[str, list[Tok]] = {}
    for element in split_top(toks):
        if len(element) >= 2 and element[0].kind == "id" and element[1].text == ":":
            fields[element[0].text] = element[2:]
    if "input" not in fields or "want" not in fields:
        return
    want = fields["want"]
    if len(want) == 1 and want[0].text == "nil":
        secrets: list[Found | str] = []
    elif [t.text for t in want[:3]] == ["[", "]", "string"]:
        secrets = helpers.collect(want, scope)
    else:
        result.skipped["trufflehog: want is not []string or nil"] += 1
        return
    inputs = helpers.collect(fields["input"], scope)
    if len(inputs) != 1 or isinstance(inputs[0], str):
        result.skipped[f"trufflehog input: {inputs[0] if inputs else 'empty'}"] += 1
        return
    name = ""
    if "name" in fields and len(fields["name"]) == 1 and fields["name"][0].kind in ("str", "raw"):
        name = fields["name"][0].value
    named = tuple(s.text for s in secrets if isinstance(s, Found))
    result.samples.append(
        Sample("trufflehog", provider, inputs[0].text, bool(secrets), named, None, name)
    )


# ---------------------------------------------------------------- detect-secrets


class PyEvaluator:
    """Evaluates constant Python expressions over a module's constant names."""

    def __init__(self, names: dict[str, object]) -> None:
        self.names = names

    def eval(self, node: ast.expr) -> object:
        match node:
            case ast.Constant(value=value):
                return value
            case ast.Name(id=name):
                if name in self.names:
                    return self.names[name]
                raise Unparsed(f"name {name}")
            case ast.Tuple(elts=elts) | ast.List(elts=elts):
                return [self.eval(e) for e in elts]
            case ast.BinOp(left=left, op=ast.Add() | ast.Mod() | ast.Mult() as op, right=right):
                a, b = self.eval(left), self.eval(right)
                if isinstance(op, ast.Add) and isinstance(a, str) and isinstance(b, str):
                    return a + b
                if isinstance(op, ast.Mod) and isinstance(a, str):
                    return a % (tuple(b) if isinstance(b, list) else b)
                if isinstance(op, ast.Mult) and isinstance(a, str) and isinstance(b, int):
                    return a * min(b, 10_000)
                raise Unparsed("operator")
            case ast.Subscript(value=value, slice=ast.Slice(lower=lo, upper=hi, step=None)):
                text = self.eval(value)
                low = self.eval(lo) if lo else None
                high = self.eval(hi) if hi else None
                if (
                    isinstance(text, str)
                    and isinstance(low, int | None)
                    and isinstance(high, int | None)
                ):
                    return text[low:high]
                raise Unparsed("slice")
            case ast.JoinedStr(values=values):
                return "".join(self._fpart(v) for v in values)
            case ast.Call(func=ast.Attribute(value=target, attr="format"), args=args, keywords=kws):
                text = self.eval(target)
                if not isinstance(text, str):
                    raise Unparsed("format target")
                kw = {k.arg: self.eval(k.value) for k in kws if k.arg}
                return text.format(*[self.eval(a) for a in args], **kw)
            case ast.Call(
                func=ast.Attribute(value=ast.Name(id="textwrap"), attr="dedent"), args=[arg]
            ):
                text = self.eval(arg)
                if isinstance(text, str):
                    return textwrap.dedent(text)
                raise Unparsed("dedent")
            case ast.Call(func=ast.Attribute(attr="param"), args=args):  # pytest.param(...)
                return [self.eval(a) for a in args]
        raise Unparsed(type(node).__name__)

    def _fpart(self, node: ast.expr) -> str:
        if isinstance(node, ast.Constant):
            return str(node.value)
        if (
            isinstance(node, ast.FormattedValue)
            and node.format_spec is None
            and node.conversion == -1
        ):
            return str(self.eval(node.value))
        raise Unparsed("f-string part")


_EVAL_ERRORS = (Unparsed, ValueError, TypeError, IndexError, KeyError)


def _module_constants(tree: ast.Module, skipped: Counter[str]) -> dict[str, object]:
    """Module and class level `NAME = constant`; a list keeps the rows that evaluate."""
    names: dict[str, object] = {}
    evaluator = PyEvaluator(names)
    bodies: list[list[ast.stmt]] = [tree.body]
    bodies += [n.body for n in tree.body if isinstance(n, ast.ClassDef)]
    for body in bodies:
        for stmt in body:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
                continue
            target = stmt.targets[0]
            if not isinstance(target, ast.Name):
                continue
            if isinstance(stmt.value, ast.List):
                rows = []
                for element in stmt.value.elts:
                    try:
                        rows.append(evaluator.eval(element))
                    except _EVAL_ERRORS as exc:
                        skipped[f"detect-secrets table row: {exc or type(exc).__name__}"] += 1
                names[target.id] = rows
                continue
            with contextlib.suppress(*_EVAL_ERRORS):
                names[target.id] = evaluator.eval(stmt.value)
    return names


def extract_detect_secrets(root: Path) -> Extraction:
    commit, texts = read_tree(root, "tests/plugins", "_test.py")
    result = Extraction(commit=commit)
    for path, text in sorted(texts.items()):
        plugin = path.rsplit("/", 1)[-1].removesuffix("_test.py")
        tree = ast.parse(text)
        evaluator = PyEvaluator(_module_constants(tree, result.skipped))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _is_parametrize(node) and len(node.args) >= 2:
                for sample in _parametrized(node, evaluator, plugin, result.skipped):
                    result.samples.append(sample)
    return result


def _is_parametrize(node: ast.Call) -> bool:
    return isinstance(node.func, ast.Attribute) and node.func.attr == "parametrize"


def _parametrized(
    node: ast.Call, evaluator: PyEvaluator, plugin: str, skipped: Counter[str]
) -> Iterator[Sample]:
    names_node, values_node = node.args[0], node.args[1]
    if not isinstance(names_node, ast.Constant) or not isinstance(names_node.value, str):
        return
    names = tuple(n.strip() for n in names_node.value.split(","))
    if names == ("file_extension", "line", "expected_secret"):
        yield from _keyword_cases(values_node, evaluator, plugin, skipped)
        return
    if not isinstance(values_node, ast.List | ast.Tuple):
        skipped[f"detect-secrets {names}: not a literal list"] += 1
        return
    for element in values_node.elts:
        cells = element.elts if isinstance(element, ast.Tuple) else [element]
        values: dict[str, object] = {}
        for name, cell in zip(names, cells, strict=False):
            try:  # each cell alone: a plugin class in one cell does not spoil the row
                values[name] = evaluator.eval(cell)
            except _EVAL_ERRORS as exc:
                values[name] = Unparsed(str(exc) or type(exc).__name__)
        line = values.get("payload", values.get("line"))
        if isinstance(line, str) and isinstance(values.get("should_flag"), bool):
            yield Sample("detect-secrets", plugin, line, bool(values["should_flag"]))
        elif names == ("plugin", "non_secret", "secret") and not any(
            isinstance(values.get(n), Unparsed) for n in names[1:]
        ):
            # the test's own quoted form, which the plugin must (and must not) catch
            secret, non_secret = str(values["secret"]), str(values["non_secret"])
            yield Sample("detect-secrets", plugin, f'"{secret}"', True, (secret,))
            yield Sample("detect-secrets", plugin, f'"{non_secret}"', False)
        else:
            failed = next((v for v in values.values() if isinstance(v, Unparsed)), None)
            why = f"unparsed ({failed})" if failed else "not a detection case"
            skipped[f"detect-secrets ({', '.join(names)}): {why}"] += 1


def _keyword_cases(
    node: ast.expr, evaluator: PyEvaluator, plugin: str, skipped: Counter[str]
) -> Iterator[Sample]:
    """`parse_test_cases([(ext, CASES), ...])`: each CASES row is (line, expected_secret)."""
    outer = node.elts[0] if isinstance(node, ast.Tuple | ast.List) and node.elts else node
    if not (isinstance(outer, ast.Call) and outer.args and isinstance(outer.args[0], ast.List)):
        skipped["detect-secrets keyword: table not understood"] += 1
        return
    for pair in outer.args[0].elts:
        if not (isinstance(pair, ast.Tuple) and len(pair.elts) == 2):
            continue
        try:
            ext = evaluator.eval(pair.elts[0])
        except Unparsed:
            continue
        table = pair.elts[1]
        if not (isinstance(table, ast.Name) and table.id in evaluator.names):
            skipped["detect-secrets keyword: table name unresolved"] += 1
            continue
        path = f"mock_filename.{ext}" if ext else None
        for row in _table_rows(evaluator, table.id, skipped):
            line, expected = row
            secrets = (expected,) if isinstance(expected, str) else ()
            yield Sample(
                "detect-secrets", plugin, line, expected is not None, secrets, path, str(ext)
            )


def _table_rows(
    evaluator: PyEvaluator, name: str, skipped: Counter[str]
) -> Iterable[tuple[str, object]]:
    rows = evaluator.names[name]
    if not isinstance(rows, list):
        return []
    good = [r for r in rows if isinstance(r, list) and len(r) == 2 and isinstance(r[0], str)]
    skipped["detect-secrets keyword: row of another shape"] += len(rows) - len(good)
    return [(r[0], r[1]) for r in good]


# ---------------------------------------------------------------- scoring

_TOKEN_RUN = re.compile(r"[A-Za-z0-9+/=_-]{12,}")


def entropy(value: str) -> float:
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values()) if n else 0.0


def looks_like_token(run: str) -> bool:
    return (
        len(run) >= 12
        and any(c.isdigit() for c in run)
        and any(c.isalpha() for c in run)
        and entropy(run) >= 3.0
    )


def token_runs(text: str) -> list[str]:
    return [m.group() for m in _TOKEN_RUN.finditer(text) if looks_like_token(m.group())]


def survives(part: str, output: str) -> bool:
    """`part` is in `output` whole, or a token-like piece of it of >= 12 characters is."""
    if part in output:
        return True
    part = part[:400]
    for start in range(len(part) - 11):
        end = start + 12
        if part[start:end] not in output:
            continue
        while end < len(part) and part[start : end + 1] in output:
            end += 1
        if looks_like_token(part[start:end]):
            return True
    return False


@dataclass(frozen=True)
class Verdict:
    sample: Sample
    path: str
    strict_kept: bool  # positives: no [REDACTED] at all
    leak_kept: bool  # positives: a secret-looking part survived
    changed: bool  # negatives: output differs from input
    error: str = ""


def judge(sample: Sample, path: str, scrub: Callable[[str, str], str]) -> Verdict:
    try:
        output = scrub(sample.text, path)
    except Exception as exc:  # a crash is a finding, not the end of the run
        return Verdict(sample, path, True, True, False, f"{type(exc).__name__}: {exc}")
    error = "line count changed" if output.count("\n") != sample.text.count("\n") else ""
    strict = REDACTED not in output
    parts = [s for s in sample.secrets if len(s) >= 6] or token_runs(sample.text)
    leak = any(survives(p, output) for p in parts) if parts else strict
    return Verdict(sample, path, strict, leak, output != sample.text, error)


# ---------------------------------------------------------------- report

# Runs between quotes, spaces and delimiters; a run of 8+ is masked unless it is a plain word.
_MASKABLE = re.compile(r"[^\s\"'`=:,;(){}\[\]<>|\\]{8,}")
_PLAIN_WORD = re.compile(r"[A-Za-z_.\-]{1,23}|https?|[a-z]+(?:[./-][a-z]+)*")


def mask(text: str, width: int = 80) -> str:
    """One line, token-like runs masked in the middle, cut to `width`."""

    def hide(m: re.Match[str]) -> str:
        run = m.group()
        if REDACTED in run or _PLAIN_WORD.fullmatch(run):
            return run  # names like githubToken or AWS_SECRET_ACCESS_KEY stay readable
        return f"{run[:4]}{'*' * min(len(run) - 6, 8)}{run[-2:]}"

    flat = text.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", " ")
    flat = _MASKABLE.sub(hide, flat)
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:5.1f}%" if whole else "   n/a"


_TABLE_HEAD = (
    "| TP | kept (strict) | kept (leak) | rules with a TP kept (leak) | FP | FP redacted "
    "| FP redacted, no token-like part | FP redacted, token-like near miss |"
)


def _row(verdicts: list[Verdict]) -> str:
    pos = [v for v in verdicts if v.sample.positive]
    neg = [v for v in verdicts if not v.sample.positive]
    plain = [v for v in neg if not token_runs(v.sample.text)]
    near = [v for v in neg if token_runs(v.sample.text)]
    rules = {(v.sample.source, v.sample.rule) for v in pos}
    leaky = {(v.sample.source, v.sample.rule) for v in pos if v.leak_kept}
    cells = [
        str(len(pos)),
        pct(sum(v.strict_kept for v in pos), len(pos)),
        pct(sum(v.leak_kept for v in pos), len(pos)),
        f"{len(leaky)} of {len(rules)}",
        str(len(neg)),
        pct(sum(v.changed for v in neg), len(neg)),
        f"{pct(sum(v.changed for v in plain), len(plain))} of {len(plain)}",
        f"{pct(sum(v.changed for v in near), len(near))} of {len(near)}",
    ]
    return " | ".join(cells) + " |"


def report(
    verdicts: list[Verdict], paths: list[str], kept_limit: int, out: Callable[[str], None]
) -> None:
    errors = [v for v in verdicts if v.error]
    out("## Overall (each sample under each path)")
    out("")
    out(f"| path {_TABLE_HEAD}")
    out("|---" * 9 + "|")
    for path in [*paths, "(source's own path)"]:
        chosen = [v for v in verdicts if v.path == path]
        if chosen:
            out(f"| {path} | {_row(chosen)}")
    out("")
    out("## Per source and path")
    out("")
    out(f"| source | path {_TABLE_HEAD}")
    out("|---" * 10 + "|")
    for source in sorted({v.sample.source for v in verdicts}):
        for path in [*paths, "(source's own path)"]:
            chosen = [v for v in verdicts if v.path == path and v.sample.source == source]
            if chosen:
                out(f"| {source} | {path} | {_row(chosen)}")
    out("")
    if errors:
        out(f"## Errors ({len(errors)})")
        out("")
        for v in errors[:20]:
            where = f"{v.sample.source} {v.sample.rule} under {v.path}"
            out(f"- {where}: {v.error}: `{mask(v.sample.text)}`")
        out("")
    main_path = paths[0]
    positives = [v for v in verdicts if v.sample.positive]
    negatives = [v for v in verdicts if not v.sample.positive]
    _report_groups(positives, main_path, out)
    _report_variants(positives, main_path, out)
    _report_kept(positives, main_path, kept_limit, out)
    _report_fps(negatives, main_path, out)


def _report_groups(
    positives: list[Verdict], path: str, out: Callable[[str], None], limit: int = 60
) -> None:
    groups: dict[tuple[str, str], list[Verdict]] = defaultdict(list)
    for v in positives:
        if v.path == path:
            groups[(v.sample.source, v.sample.rule)].append(v)
    ranked = sorted(
        groups.items(), key=lambda kv: (-sum(v.leak_kept for v in kv[1]) / len(kv[1]), -len(kv[1]))
    )
    leaky = [(k, vs) for k, vs in ranked if any(v.leak_kept or v.strict_kept for v in vs)]
    whole = sum(1 for _, vs in ranked if not any(v.leak_kept for v in vs))
    out(f"## Rules/providers with kept true positives, worst first (path {path})")
    out("")
    out(
        f"{len(groups)} rules/providers; {whole} with nothing kept (leak measure); "
        f"{len(leaky)} with something kept, the worst {min(len(leaky), limit)} listed."
    )
    out("")
    out("| source | rule/provider | TP | kept (strict) | kept (leak) |")
    out("|---|---|---|---|---|")
    for (source, rule), vs in leaky[:limit]:
        strict, leak = sum(v.strict_kept for v in vs), sum(v.leak_kept for v in vs)
        out(f"| {source} | {rule} | {len(vs)} | {strict} | {leak} ({pct(leak, len(vs)).strip()}) |")
    out("")


def _report_variants(positives: list[Verdict], path: str, out: Callable[[str], None]) -> None:
    groups: dict[str, list[Verdict]] = defaultdict(list)
    for v in positives:
        if v.sample.source == "gitleaks" and v.sample.variant and v.path == path:
            groups[v.sample.variant].append(v)
    if not groups:
        return
    out(f"## gitleaks sample templates (GenerateSampleSecrets contexts), path {path}")
    out("")
    out("| template | TP | kept (leak) |")
    out("|---|---|---|")
    for name, vs in sorted(
        groups.items(), key=lambda kv: -sum(v.leak_kept for v in kv[1]) / len(kv[1])
    ):
        leak = sum(v.leak_kept for v in vs)
        out(f"| {name} | {len(vs)} | {leak} ({pct(leak, len(vs)).strip()}) |")
    out("")


def _report_kept(
    positives: list[Verdict], path: str, limit: int, out: Callable[[str], None]
) -> None:
    kept = [v for v in positives if v.path == path and v.leak_kept]
    by_rule: dict[tuple[str, str], list[Verdict]] = defaultdict(list)
    for v in kept:
        by_rule[(v.sample.source, v.sample.rule)].append(v)
    # round-robin over rules, worst-kept rules first, so one rule does not fill the list
    order = sorted(by_rule.values(), key=lambda vs: -len(vs))
    picked: list[Verdict] = []
    while len(picked) < limit and any(order):
        for vs in order:
            if vs and len(picked) < limit:
                picked.append(vs.pop(0))
    out(f"## Kept true positives (leak measure), up to {limit}, path {path}, masked")
    out("")
    for v in picked:
        s = v.sample
        where = f" [{s.variant}]" if s.variant else ""
        out(f"- {s.source} {s.rule}{where}: `{mask(s.text)}`")
    out("")


def _report_fps(negatives: list[Verdict], path: str, out: Callable[[str], None]) -> None:
    hit = [v for v in negatives if v.path == path and v.changed and not token_runs(v.sample.text)]
    out(f"## Redacted false positives with no token-like part, path {path} ({len(hit)}), masked")
    out("")
    for v in hit[:40]:
        out(f"- {v.sample.source} {v.sample.rule}: `{mask(v.sample.text)}`")
    out("")


# ---------------------------------------------------------------- entry point


def dedupe(samples: Iterable[Sample]) -> list[Sample]:
    seen: set[tuple[str, str, str, bool, str | None]] = set()
    unique: list[Sample] = []
    for s in samples:
        key = (s.source, s.rule, s.text, s.positive, s.path)
        if key not in seen:
            seen.add(key)
            unique.append(s)
    return unique


def load_scrub(code: Path | None) -> tuple[Callable[[str, str], str], str]:
    if code is not None:
        if not (code / "bot" / "ingest").is_dir():
            raise FileNotFoundError(f"no bot/ingest under {code}")
        sys.path.insert(0, str(code.resolve()))
    module = importlib.import_module("bot.ingest.secrets")
    where = str(Path(module.__file__ or "?").resolve())
    if code is not None and not where.startswith(str(code.resolve())):
        raise ImportError(f"bot.ingest.secrets came from {where}")
    return (lambda text, path: module.scrub(text, path).text), where


def describe_code(code: Path | None) -> str:
    if code is None:
        return "(installed bot package)"
    head = subprocess.run(
        ["git", "-C", str(code), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    dirty = subprocess.run(
        ["git", "-C", str(code), "status", "--porcelain", "--", "bot"],
        capture_output=True,
        text=True,
    )
    state = "with uncommitted changes under bot/" if dirty.stdout.strip() else "clean"
    return f"{code} at {head.stdout.strip() or '?'} ({state})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gitleaks", type=Path, help="gitleaks git dir or checkout")
    parser.add_argument("--detect-secrets", type=Path, help="detect-secrets git dir or checkout")
    parser.add_argument("--trufflehog", type=Path, help="trufflehog git dir or checkout")
    parser.add_argument("--code", type=Path, help="checkout whose bot package is measured")
    parser.add_argument(
        "--path", action="append", help=f"path context (default {', '.join(DEFAULT_PATHS)})"
    )
    parser.add_argument("--kept", type=int, default=40, help="kept samples to list")
    args = parser.parse_args(argv)
    sources = {
        "gitleaks": (args.gitleaks, extract_gitleaks),
        "detect-secrets": (args.detect_secrets, extract_detect_secrets),
        "trufflehog": (args.trufflehog, extract_trufflehog),
    }
    if not any(root for root, _ in sources.values()):
        parser.error("give at least one of --gitleaks, --detect-secrets, --trufflehog")
    try:
        scrub, where = load_scrub(args.code)
    except Exception as exc:
        print(
            f"error: cannot import bot.ingest.secrets from {args.code}: {type(exc).__name__}: {exc}"
        )
        return 2
    paths = args.path or list(DEFAULT_PATHS)
    out = print
    out(f"# Secret scrubber holdout\n\ncode: {describe_code(args.code)}\nmodule: {where}\n")
    samples: list[Sample] = []
    checks: list[str] = []
    out("| source | commit | TP samples | FP samples | skipped (reason: count) |")
    out("|---|---|---|---|---|")
    for name, (root, extract) in sources.items():
        if root is None:
            continue
        found = extract(root)
        unique = dedupe(found.samples)
        samples += unique
        reasons = "; ".join(f"{r}: {n}" for r, n in found.skipped.most_common() if n)
        tps = sum(s.positive for s in unique)
        out(f"| {name} | {found.commit} | {tps} | {len(unique) - tps} | {reasons or 'none'} |")
        if found.check:
            checks.append(f"{name} parse check: {found.check}.")
    out("")
    for line in checks:
        out(line)
    out("")
    verdicts = [judge(s, p, scrub) for s in samples for p in paths]
    verdicts += [judge(s, s.path, scrub) for s in samples if s.path]
    own = [
        Verdict(v.sample, "(source's own path)", v.strict_kept, v.leak_kept, v.changed, v.error)
        for v in verdicts
        if v.sample.path is not None and v.path == v.sample.path
    ]
    report([v for v in verdicts if v.path in paths] + own, paths, args.kept, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
