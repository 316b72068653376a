"""Golden definitions and references for the polyglot fixture repo, every language.

On a mismatch the test prints a unified diff. After checking a change by eye,
regenerate with `UPDATE_GOLDEN=1 pytest tests/bot/symbols/test_extract_golden.py`.
"""

from __future__ import annotations

from pathlib import Path

from bot.code.languages import language_for
from bot.symbols.extract import extract_text
from bot.symbols.links import BARE, BUILTIN, OTHER, QUALIFIED, SELF, SUPER, TYPED
from tests.support.golden import check_golden
from tests.support.paths import POLYGLOT

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden" / "polyglot_symbols.txt"


def render() -> str:
    out = [
        "# Symbols of tests/fixtures/polyglot: definitions (lines, kind, symbol), then",
        "# references (name: line, with * for a call, the calling definition and, where the",
        "# language records it, how it was written), then bases, imports, receivers, typed",
        "# receivers, field and result types, lists of names, __all__ and aliases.",
        "# Regenerate: UPDATE_GOLDEN=1 pytest tests/bot/symbols/test_extract_golden.py",
    ]
    for path in sorted(POLYGLOT.iterdir()):
        language = language_for(path.name) or "text"
        found = extract_text(path.name, path.read_text(encoding="utf-8"), language)
        symbols = found.to_file_symbols()
        out.append("")
        out.append(f"== {path.name} ({language})")
        for d in symbols.definitions:
            lines = f"{d.start_line}-{d.end_line}"
            out.append(f"{lines:>9}  {d.kind:<9}  {d.symbol}")
        for r in symbols.references:
            call = "*" if r.call else " "
            form = f" [{forms(r.form)}]" if r.form else ""
            out.append(f"  ref {r.name}: {r.line}{call} {r.caller}{form}".rstrip())
        links = symbols.links
        out += [f"  bases {symbol}: {', '.join(bases)}" for symbol, bases in links.bases]
        out += [f"  import {b.local} <- {b.module} {b.name}".rstrip() for b in links.imports]
        out += [f"  receiver {name}: {line} {chain}" for line, name, chain in links.quals]
        out += [f"  typed {name}: {line} {via} is {kind}" for line, name, via, kind in links.typed]
        out += [f"  field {owner}.{name}: {kind}" for owner, name, kind in links.fields]
        out += [f"  result {symbol}: {kind}" for symbol, kind in links.results]
        out += [f"  list {name} ({at}): {' '.join(names)}" for name, at, names in links.lists]
        if links.exported is not None:
            out.append(f"  __all__: {' '.join(links.exported)}")
        if links.package:
            out.append(f"  package {links.package}")
        for a in symbols.aliases:
            source = f" from {a.module}" if a.module else ""
            on = f" on {a.owner}" if a.owner else ""
            where = f"{a.start_line}-{a.end_line}"
            out.append(f"  {a.kind} {a.name}{on}: {where} {a.target}{source}")
    return "\n".join(out) + "\n"


_FORMS = {
    BARE: "bare",
    SELF: "self",
    SUPER: "super",
    QUALIFIED: "qualified",
    OTHER: "other",
    TYPED: "typed",
    BUILTIN: "builtin",
}


def forms(bits: int) -> str:
    return " ".join(name for bit, name in _FORMS.items() if bits & bit)


def test_polyglot_symbols_match_golden() -> None:
    check_golden(GOLDEN, render(), "symbols")


def test_golden_has_symbols_in_every_syntax_language() -> None:
    text = GOLDEN.read_text(encoding="utf-8")
    blocks = [b for b in text.split("\n== ")[1:] if "\n" in b.strip()]
    languages = {b.split("(", 1)[1].split(")", 1)[0] for b in blocks if "  ref " in b}
    assert languages >= {
        "python", "javascript", "typescript", "tsx", "go", "java", "rust", "c", "cpp",
        "csharp", "ruby", "php",
    }  # fmt: skip
