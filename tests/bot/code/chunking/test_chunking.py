"""Specific chunking behaviour: names, splitting, merging, windows, Markdown, odd input."""

from __future__ import annotations

import logging
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import bot.code.chunking as chunking
from bot.code.chunking import DEFAULT_BUDGET, ChunkBudget, chunk_file
from bot.models import Span
from tests.support.chunks import assert_well_formed
from tests.support.paths import POLYGLOT as FIXTURES

# Everything over four lines is opened and nothing merges: shows every definition.
SPLIT = ChunkBudget(max_lines=4, max_chars=10_000, min_chars=0, window_lines=4, window_overlap=1)
NO_MERGE = ChunkBudget(min_chars=0)


def chunks(source: str, language: str, budget: ChunkBudget = DEFAULT_BUDGET) -> list[Span]:
    text = textwrap.dedent(source).lstrip("\n")
    spans = chunk_file(f"example.{language}", text, language, budget=budget)
    assert_well_formed(text, spans, budget)
    return spans


def table(spans: list[Span]) -> list[tuple[int, int, str, str]]:
    return [(s.start_line, s.end_line, s.kind, s.symbol) for s in spans]


def first_by_symbol(spans: list[Span]) -> dict[str, Span]:
    found: dict[str, Span] = {}
    for span in spans:
        found.setdefault(span.symbol, span)
    return found


def symbols(source: str, language: str) -> dict[str, str]:
    """symbol -> kind of every chunk when everything is split."""
    return {s.symbol: s.kind for s in chunks(source, language, SPLIT) if s.symbol}


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


# -- qualified names -----------------------------------------------------------


def test_python_nested_classes_are_qualified() -> None:
    found = symbols(
        """
        class Outer:
            class Inner:
                def method(self):
                    a = 1
                    b = 2
                    return a + b

                def other(self):
                    return 2

            def after(self):
                def helper():
                    return 1
                x = helper()
                y = x + 1
                return y
        """,
        "python",
    )
    assert found["Outer.Inner.method"] == "method"
    assert found["Outer.Inner.other"] == "method"
    assert found["Outer.after.helper"] == "function"  # nested in a method, not a class
    assert found["Outer.Inner"] == "class"


def test_go_methods_are_named_by_receiver() -> None:
    found = first_by_symbol(chunks(fixture("cache.go"), "go", SPLIT))
    assert found["Cache.Get"].kind == "method"
    assert found["Cache.Get"].start_line == 44  # its doc comment
    assert found["Cache.Len"].kind == "method"  # value receiver
    assert found["New"].kind == "function"
    assert found["Store"].kind == "interface"
    assert {"Hit", "Miss"} <= set(found)  # grouped `type (...)` declarations


def test_rust_impl_methods_are_named_by_type() -> None:
    found = symbols(fixture("tokenizer.rs"), "rust")
    assert found["Tokenizer.new"] == "method"
    assert found["Tokenizer.next_token"] == "method"  # impl Lexer for Tokenizer<'a>
    assert found["Token.fmt"] == "method"  # impl fmt::Display for Token
    assert found["Lexer.collect_all"] == "method"  # default method of a trait
    assert found["testing.words"] == "function"  # a module is not a class
    assert found["tokens"] == "macro"


def test_cpp_out_of_class_definitions_are_methods_of_their_class() -> None:
    found = symbols(
        """
        namespace geo {
        double& Matrix::at(int r, int c) {
            check(r, c);
            return data_[r * cols_ + c];
        }
        }
        template <typename T>
        T Box<T>::get() const {
            T copy = v;
            return copy;
        }
        ns::Foo::~Foo() {
            close();
            release();
        }
        Matrix Matrix::operator*(const Matrix& other) const {
            Matrix out;
            return out;
        }
        bool operator==(const A& a, const A& b) {
            bool same = a.x == b.x;
            return same;
        }
        """,
        "cpp",
    )
    assert found["geo.Matrix.at"] == "method"
    assert found["Box.get"] == "method"
    assert found["ns.Foo.~Foo"] == "method"
    assert found["Matrix.operator*"] == "method"
    assert found["operator=="] == "function"


def test_c_declarators_typedefs_and_preprocessor_blocks() -> None:
    found = symbols(
        """
        typedef struct {
            int x;
            int y;
            int z;
        } point_t;

        static int (*pick(int which))(int) {
            (void)which;
            return handler;
        }

        #ifdef DEBUG
        void dump(const point_t *p) {
            printf("%d", p->x);
            printf("%d", p->y);
        }
        #endif
        """,
        "c",
    )
    assert found["point_t"] == "struct"
    assert found["pick"] == "function"
    assert found["dump"] == "function"


def test_javascript_named_function_values() -> None:
    found = symbols(fixture("inventory.js"), "javascript")
    assert found["formatSku"] == "function"  # const formatSku = (sku) => {...}
    assert found["batches"] == "function"
    assert found["Inventory.reserve"] == "method"
    assert found["Inventory.onLow"] == "method"  # class field holding an arrow function
    assert found["Inventory.toJSON"] == "method"  # Inventory.prototype.toJSON = function
    assert found["restockPlan.needed"] == "function"


def test_typescript_declarations() -> None:
    found = symbols(fixture("rate_limiter.ts"), "typescript")
    assert found["TokenBucket.refill"] == "method"
    assert found["Limiter"] == "interface"
    assert found["Limits"] == "namespace"
    assert found["Limits.forPlan"] == "function"
    assert found["Policy.describe"] == "method"
    assert found["createLimiter"] == "function"  # export default function
    found = symbols(
        """
        export default function () {
          const a = 1;
          const b = 2;
          return a + b;
        }
        """,
        "javascript",
    )
    assert found == {"default": "function"}


def test_tsx_components() -> None:
    found = symbols(fixture("OrderList.tsx"), "tsx")
    assert found["OrderList"] == "function"
    assert found["OrderList.handleChange"] == "function"
    assert found["OrderErrorBoundary.render"] == "method"


def test_java_and_csharp_members() -> None:
    java = symbols(fixture("LedgerService.java"), "java")
    assert java["LedgerService.charge"] == "method"
    assert java["LedgerService.LedgerService"] == "method"  # constructor
    assert java["LedgerService.MemoryAuditor.record"] == "method"
    assert java["LedgerService.Auditor"] == "interface"
    csharp = symbols(fixture("NotificationHub.cs"), "csharp")
    assert csharp["Acme.Notifications.NotificationHub.NotifyAsync"] == "method"
    assert csharp["Acme.Notifications.NotificationHub.NullSender"] == "class"
    assert csharp["Acme.Notifications"] == "namespace"


def test_ruby_and_php_members() -> None:
    ruby = symbols(fixture("feature_flags.rb"), "ruby")
    assert ruby["FeatureFlags.Flag.enabled_for?"] == "method"
    assert ruby["FeatureFlags.Flag.from_hash"] == "method"  # def self.from_hash
    assert ruby["FeatureFlags.Registry.load"] == "method"
    php = symbols(fixture("UserRepository.php"), "php")
    assert php["UserRepository.page"] == "method"
    assert php["Timestamps"] == "trait"
    assert php["normalize_email"] == "function"


# -- spans of definitions --------------------------------------------------------


def test_decorators_and_leading_comments_belong_to_the_definition() -> None:
    spans = chunks(
        """
        import os  # a trailing comment is not attached to what follows
        # about compute
        @cache
        @retry(times=3)
        def compute(x):
            return x * 2

        # separated by a blank line: not attached

        def other():
            return 1
        """,
        "python",
        NO_MERGE,
    )
    assert (2, 6, "function", "compute") in table(spans)
    assert (10, 11, "function", "other") in table(spans)
    assert (1, 1, "block", "") in table(spans)


def test_header_names_the_enclosing_class_and_the_signature() -> None:
    spans = chunks(fixture("retry_queue.py"), "python", SPLIT)
    run_due = next(s for s in spans if s.symbol == "RetryQueue.run_due")
    assert run_due.header == "class RetryQueue:\ndef run_due(self) -> int:"
    blocks = [s for s in spans if s.kind in ("block", "window")]
    assert blocks and all(s.header == "" for s in blocks)


def test_big_class_is_split_into_head_and_methods() -> None:
    methods = "\n".join(
        f"    def step_{n}(self, value):\n"
        + "".join(f"        value = value * {k} + {n}  # arithmetic step\n" for k in range(8))
        + "        return value\n"
        for n in range(10)
    )
    head = textwrap.dedent(
        '''\
        class Pipeline(Base):
            """Runs the steps in order.

            Each step feeds the next.
            """

            limit = 10

        '''
    )
    spans = chunks(head + methods, "python")
    assert table(spans)[0] == (1, 7, "class", "Pipeline")
    assert spans[0].header == "class Pipeline(Base):"
    assert [s.symbol for s in spans[1:]] == [f"Pipeline.step_{n}" for n in range(10)]
    assert all(s.kind == "method" for s in spans[1:])
    assert spans[-1].end_line == len((head + methods).splitlines())


def test_small_neighbours_are_merged_but_not_into_imports() -> None:
    getters = "".join(f"def get_{n}(self):\n    return self._{n}\n\n" for n in "abcdef")
    imports = "".join(f"from package.module_{n} import helper_{n}\n" for n in range(5))
    spans = chunks(imports + "\n" + getters, "python")
    assert table(spans) == [
        (1, 5, "block", ""),
        (7, 23, "function", "get_a, get_b, get_c, get_d, get_e, get_f"),
    ]
    assert spans[1].header == ""  # several definitions: no single signature


def test_merging_stops_at_the_budget() -> None:
    source = "".join(f"def f{n}():\n    return {n}\n\n" for n in range(30))
    spans = chunks(source, "python", ChunkBudget(max_lines=20, max_chars=3000, min_chars=400))
    assert [s.end_line - s.start_line + 1 for s in spans] == [20, 20, 20, 20, 5]
    assert spans[0].symbol == "f0, f1, f2, f3, f4, f5, f6"


def test_huge_function_without_children_becomes_windows() -> None:
    body = "".join(f"    total += compute({n})\n" for n in range(150))
    source = f"def huge(total):\n{body}    return total\n"
    budget = ChunkBudget(max_lines=80, max_chars=30_000, window_lines=60, window_overlap=10)
    spans = chunks(source, "python", budget)
    assert [(s.start_line, s.end_line) for s in spans] == [(1, 60), (51, 110), (101, 152)]
    assert all((s.kind, s.symbol) == ("function", "huge") for s in spans)
    assert all(s.header == "def huge(total):" for s in spans)


def test_windows_prefer_to_end_before_a_blank_line() -> None:
    paragraphs = "".join(f"paragraph {n} line {k}\n" for n in range(9) for k in range(6))
    text = paragraphs.replace("line 5\n", "line 5\n\n")
    spans = chunks(text, "text", ChunkBudget(max_lines=20, window_lines=16, window_overlap=0))
    assert all(not text.splitlines()[s.end_line] for s in spans[:-1])  # next line is blank


def test_chars_budget_limits_chunks_of_long_lines() -> None:
    text = "\n".join("x" * 900 for _ in range(10))
    spans = chunks(text, "text")
    assert [(s.start_line, s.end_line) for s in spans] == [(1, 3), (3, 5), (5, 7), (7, 9), (9, 10)]


def test_a_single_enormous_line_is_one_chunk() -> None:
    text = "var x = [" + ", ".join(str(n) for n in range(50_000)) + "];"
    assert table(chunks(text, "javascript")) == [(1, 1, "block", "")]


# -- Markdown -------------------------------------------------------------------


GUIDE = """
---
title: # not a heading
---
Intro line.

# Guide

## Install ##

```bash
# inside a fence
```

~~~
## still fenced
~~~

    # indented code

### Requirements
#hashtag is text
"""


def test_markdown_sections_follow_headings_outside_fences() -> None:
    spans = chunks(GUIDE, "markdown", SPLIT)
    assert table(spans) == [
        (1, 4, "section", ""),  # front matter and intro
        (6, 6, "section", "Guide"),
        (8, 11, "section", "Guide > Install"),  # a long section becomes windows
        (11, 14, "section", "Guide > Install"),
        (14, 16, "section", "Guide > Install"),
        (16, 18, "section", "Guide > Install"),
        (20, 21, "section", "Guide > Install > Requirements"),
    ]


def test_markdown_small_sections_merge() -> None:
    spans = chunks("# A\none\n## B\ntwo\n# C\nthree\n", "markdown")
    assert table(spans) == [(1, 6, "section", "A, A > B, C")]


# -- odd input --------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   ", "\n\n\n", "\r\n\t\f\r\n"])
def test_empty_and_blank_files_have_no_chunks(text: str) -> None:
    assert chunk_file("x.py", text, "python") == []
    assert chunk_file("x.md", text, "markdown") == []
    assert chunk_file("x.txt", text, "text") == []


@pytest.mark.parametrize("newline", ["\r\n", "\r", "\n\f"])
def test_line_numbers_follow_splitlines_whatever_the_line_breaks(newline: str) -> None:
    source = "import os\n\n\nclass A:\n    def f(self):\n        return 1\n\n\ndef g():\n    pass\n"
    text = source.replace("\n", newline)
    spans = chunks(text, "python", SPLIT)
    lines = text.splitlines()
    by_symbol = {s.symbol: s for s in spans}
    assert lines[by_symbol["A"].start_line - 1] == "class A:"
    assert lines[by_symbol["g"].start_line - 1] == "def g():"
    assert lines[by_symbol["g"].end_line - 1].strip() == "pass"


def test_line_breaks_that_only_splitlines_sees() -> None:
    """Python and tree-sitter see one line where splitlines sees several: splitlines wins."""
    text = 'NOTE = "a\u2028b\x85c\x1cd"  # \v\f\n\ndef f():\n    return 1\n'
    spans = chunks(text, "python", NO_MERGE)
    lines = text.splitlines()
    f = next(s for s in spans if s.symbol == "f")
    assert lines[f.start_line - 1 : f.end_line] == ["def f():", "    return 1"]
    assert table(spans)[0] == (1, 4, "block", "")


def test_syntax_errors_still_give_sane_chunks() -> None:
    source = """
    def fine():
        return 1


    def broken(:
        return (


    class StillFound:
        def method(self):
            return 2
    """
    spans = chunks(source, "python", SPLIT)
    assert {"fine", "StillFound"} <= {s.symbol for s in spans}


def test_non_utf8_and_bom_and_nul_bytes() -> None:
    text = "\ufeffdef f():\n    return '\udcff\x00é'\n\ndef g():\n    return 2\n"
    spans = chunks(text, "python", SPLIT)
    assert [s.symbol for s in spans] == ["f", "g"]


def test_unknown_language_gets_windows() -> None:
    spans = chunks("line\n" * 130, "klingon")
    assert {s.kind for s in spans} == {"window"}
    assert spans[0].start_line == 1 and spans[-1].end_line == 130


def test_an_internal_error_degrades_to_windows(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def explode(*_: object) -> list[Span]:
        raise IndexError("bug")

    monkeypatch.setattr(chunking.SyntaxChunker, "chunk", explode)
    with caplog.at_level(logging.WARNING):
        spans = chunk_file("a.py", "def f():\n    pass\n", "python")
    assert table(spans) == [(1, 2, "window", "")]
    assert "a.py" in caplog.text


def test_parsers_are_safe_across_threads() -> None:
    paths = sorted(p for p in FIXTURES.iterdir() if p.suffix not in (".md", ".txt"))
    from bot.code.languages import language_for

    def run(path: Path) -> list[Span]:
        return chunk_file(
            path.name, path.read_text(encoding="utf-8"), language_for(path.name) or ""
        )

    expected = [run(p) for p in paths]
    with ThreadPoolExecutor(max_workers=4) as pool:
        for _ in range(3):
            assert list(pool.map(run, paths)) == expected


def test_budget_is_validated() -> None:
    with pytest.raises(ValueError):
        ChunkBudget(window_lines=10, window_overlap=10)
    with pytest.raises(ValueError):
        ChunkBudget(max_lines=0)
    with pytest.raises(ValueError):
        ChunkBudget(max_chars=100, min_chars=200)


def test_a_comment_on_the_opening_line_stays_with_its_class() -> None:
    methods = "".join(
        f"    void m{n}() {{\n        work({n});\n        more({n});\n    }}\n" for n in range(3)
    )
    spans = chunks("class A {  // the A\n" + methods + "}\n", "java", SPLIT)
    assert table(spans)[0] == (1, 1, "class", "A")
    assert table(spans)[1] == (2, 5, "method", "A.m0")


def test_python_definitions_under_conditionals_are_found() -> None:
    spans = chunks(
        """
        import sys
        if sys.platform == "win32":
            def native():
                return 1
        else:
            def native():
                return 2
        try:
            from _speedups import fast
        except ImportError:
            def fast(x):
                return x
        """,
        "python",
        NO_MERGE,
    )
    assert [(s.start_line, s.symbol) for s in spans if s.kind == "function"] == [
        (3, "native"),
        (6, "native"),
        (11, "fast"),
    ]


def test_ruby_singleton_methods() -> None:
    found = symbols(
        """
        class Config
          class << self
            def load(path)
              text = File.read(path)
              new(text)
            end
          end

          def Config.reset!
            @x = nil
            @y = nil
          end
        end
        """,
        "ruby",
    )
    assert found["Config.load"] == "method"
    assert found["Config.reset!"] == "method"


def test_typescript_decorators_overloads_and_ambient_modules() -> None:
    spans = chunks(
        """
        export function f(a: string): string;
        export function f(a: any): any {
          return a;
        }
        declare module "lib" {
          export function g(): void;
        }
        @Component({ selector: "x" })
        export class C {
          @HostListener("click")
          onClick() {
            return 1;
          }
        }
        """,
        "typescript",
        NO_MERGE,
    )
    assert table(spans) == [
        (1, 1, "block", ""),  # an overload signature has no body
        (2, 4, "function", "f"),
        (5, 7, "namespace", "lib"),
        (8, 14, "class", "C"),
    ]
    opened = first_by_symbol(
        chunks(
            "\n".join(
                [
                    "@Component({ selector: 'x' })",
                    "export class C {",
                    "  @HostListener('click')",
                    "  onClick() {",
                    "    return 1;",
                    "  }",
                    "}",
                ]
            ),
            "typescript",
            SPLIT,
        )
    )
    assert (opened["C"].start_line, opened["C.onClick"].start_line) == (1, 3)


def test_sources_too_big_to_parse_get_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chunking, "MAX_PARSE_BYTES", 10)
    spans = chunks("def f():\n    return 1\n", "python")
    assert table(spans) == [(1, 2, "window", "")]
