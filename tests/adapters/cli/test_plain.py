"""Text on the terminal as written: control characters made visible, prose wrapped at spaces
only, lists and code kept, the same output however the text was cut into pieces."""

from __future__ import annotations

import argparse
import inspect
import json
import random
import re
import subprocess
import textwrap

import pytest
from rich.cells import cell_len

from adapters.cli.plain import Wrapper, hanging_indent, visible, wrapped

# Text we did not write: the standard library's own documentation and code.
STDLIB_DOCS = [inspect.getdoc(m) or "" for m in (argparse, json, subprocess, re, textwrap)]
STDLIB_CODE = inspect.getsource(textwrap)


def answer_like(doc: str) -> str:
    """A model-style answer around real prose: a list, a path, and a fenced code block."""
    return (
        f"{doc}\n\n- see `src/flask/json/__init__.py` and [[repos]] in codecite.toml\n"
        f"- a very long path src/some/deeply/nested/package/module_with_a_long_name.py:L10-L42\n"
        f"```python\n{STDLIB_CODE[:1500]}\n```\nDone."
    )


def fenced_lines(text: str) -> list[str]:
    out, inside = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            inside = not inside
        elif inside:
            out.append(line)
    return out


@pytest.mark.parametrize("width", [20, 41, 80, 133])
@pytest.mark.parametrize("doc", STDLIB_DOCS, ids=["argparse", "json", "subprocess", "re", "tw"])
def test_wrapping_only_moves_spaces_to_line_breaks(doc: str, width: int) -> None:
    text = answer_like(doc)
    out = wrapped(text, width)
    assert out.split() == text.split()  # no word split, lost or added
    assert fenced_lines(out) == fenced_lines(text)  # code as written
    prose = [line for line in out.split("\n") if line not in fenced_lines(text)]
    too_long = [
        line
        for line in prose
        if cell_len(line) > width and len(line.split()) > 1 + line_marker(line)
    ]
    assert too_long == []  # over the width only where one word alone does not fit
    assert all(line == line.rstrip(" ") or line.strip() == "" or line in text for line in prose)


def line_marker(line: str) -> int:
    """1 when the line starts with a list marker (a marker and its word are never parted)."""
    return 1 if re.match(r"^\s*(?:[-*+•]|\d+[.)])\s", line) else 0


@pytest.mark.parametrize("seed", range(25))
def test_the_output_does_not_depend_on_how_the_text_arrives(seed: int) -> None:
    rng = random.Random(seed)
    text = answer_like(STDLIB_DOCS[seed % len(STDLIB_DOCS)])
    cuts = sorted(rng.sample(range(1, len(text)), 40))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    wrapper = Wrapper(37)
    streamed = "".join(wrapper.feed(piece) for piece in pieces) + wrapper.end()
    assert streamed == wrapped(text, 37)


def test_list_items_continue_under_their_text_and_paths_stay_whole() -> None:
    text = (
        "Two places:\n"
        "- src/flask/json/__init__.py defines the provider used by default\n"
        "  12. numbered items too, continued under their text\n"
        "  name      a two-column row continues under its second column"
    )
    assert wrapped(text, 30) == (
        "Two places:\n"
        "- src/flask/json/__init__.py\n"
        "  defines the provider used by\n"
        "  default\n"
        "  12. numbered items too,\n"
        "      continued under their\n"
        "      text\n"
        "  name      a two-column row\n"
        "            continues under\n"
        "            its second column"
    )


def test_a_word_longer_than_the_line_is_never_split() -> None:
    url = "https://github.com/pallets/flask/blob/" + "a" * 40 + "/src/flask/app.py#L1-L9"
    assert wrapped(f"see {url} now", 30) == f"see\n{url}\nnow"
    assert wrapped(url, 30) == url


def test_fenced_code_and_no_width_are_left_alone() -> None:
    code = "```\n" + "x = 1  # " + "long comment " * 10 + "\n```\nafter"
    assert wrapped(code, 20).startswith(code.rsplit("\n", 1)[0])
    prose = "word " * 50 + "\n  - item"
    assert wrapped(prose, None) == prose


def test_hanging_indent_of_each_kind_of_line() -> None:
    assert hanging_indent("plain") == 0
    assert hanging_indent("    indented") == 4
    assert hanging_indent("• bullet") == 2
    assert hanging_indent("  3) step") == 5
    assert hanging_indent("  commit   main@abc") == 11
    assert hanging_indent("Sentence.  Two spaces") == 0  # prose is no table row


def test_control_characters_are_shown_not_obeyed() -> None:
    hostile = "a\x1b]0;pwned\x07b\x1b[2Jc\r\nd\x7f\x9be\tf"
    shown = visible(hostile)
    assert shown == "a\u241b]0;pwned\u2407b\u241b[2Jc\nd\u2421\ufffde\tf"
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", shown)
    assert visible("[[repos]] __init__.py :id: [bold]x[/bold]") == (
        "[[repos]] __init__.py :id: [bold]x[/bold]"
    )
