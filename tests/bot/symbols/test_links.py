"""What extraction records about where names come from: imports, bases, call receivers."""

from __future__ import annotations

import textwrap

from bot.symbols.extract import extract_text
from bot.symbols.links import (
    BARE,
    BUILTIN,
    OTHER,
    QUALIFIED,
    SELF,
    SUPER,
    TYPED,
    Binding,
    FileLinks,
    dotted,
)
from bot.symbols.packed import PackedSymbols

SOURCE = """
import os
import os.path
import xml.etree.ElementTree as ET
from . import helpers
from .. import sibling
from ..sansio.app import App as _Base, other
from .scaffold import (
    Scaffold,
    setupmethod,
)
from werkzeug.utils import *

if TYPE_CHECKING:
    from typing import Generic


class Flask(_Base, sansio.Mixin, t.Generic[T], metaclass=Meta):
    class Inner(Scaffold):
        pass

    def run(self, path):
        send_file(path)
        self.dispatch(path)
        cls.dispatch(path)
        super().dispatch(path)
        helpers.send_file(path)
        os.path.join(path, "x")
        self.app.dispatch(path)
        response.dispatch(path)
        Flask.dispatch(self, path)
        "".join(path)
        helpers.stream(
            path
        )
"""


def extracted() -> PackedSymbols:
    return extract_text("src/flask/app.py", textwrap.dedent(SOURCE).lstrip("\n"), "python")


def test_imports_bind_names_as_python_does():
    assert extracted().file_links.imports == (
        Binding("os", "os"),
        Binding("os", "os"),  # `import os.path` binds `os`; the chain reaches os.path
        Binding("ET", "xml.etree.ElementTree"),
        Binding("helpers", ".", "helpers"),
        Binding("sibling", "..", "sibling"),
        Binding("_Base", "..sansio.app", "App"),
        Binding("other", "..sansio.app", "other"),
        Binding("Scaffold", ".scaffold", "Scaffold"),
        Binding("setupmethod", ".scaffold", "setupmethod"),
        Binding("*", "werkzeug.utils", "*"),
        Binding("Generic", "typing", "Generic"),  # guarded imports bind too
    )


def test_bases_are_kept_as_written_per_class():
    links = extracted().file_links
    assert links.bases == (
        ("Flask", ("_Base", "sansio.Mixin", "t.Generic")),  # not the metaclass
        ("Flask.Inner", ("Scaffold",)),
    )
    assert links.bases_of("Flask.Inner") == ("Scaffold",)
    assert links.bases_of("Flask.run") is None


def test_each_call_records_how_its_receiver_is_written():
    symbols = extracted().to_file_symbols()
    calls = {(r.name, r.line): r.form for r in symbols.references if r.call}
    first = 22  # `send_file(path)`
    assert calls[("send_file", first)] == BARE
    assert calls[("dispatch", first + 1)] == SELF
    assert calls[("dispatch", first + 2)] == SELF  # cls.
    assert calls[("dispatch", first + 3)] == SUPER
    assert calls[("send_file", first + 4)] == QUALIFIED
    assert calls[("join", first + 5)] == QUALIFIED  # os.path.join: `os` is imported
    assert calls[("dispatch", first + 6)] == OTHER  # self.app.dispatch
    assert calls[("dispatch", first + 7)] == OTHER  # a variable
    assert calls[("dispatch", first + 8)] == QUALIFIED  # the file's own class
    assert calls[("join", first + 9)] == BUILTIN  # a string
    assert calls[("stream", first + 10)] == QUALIFIED  # `(` on the next line
    assert extracted().file_links.quals == (
        (first + 4, "send_file", "helpers"),
        (first + 5, "join", "os.path"),
        (first + 8, "dispatch", "Flask"),
        (first + 9, "join", "str"),
        (first + 10, "stream", "helpers"),
    )
    plain = {(r.name, r.line): r.form for r in symbols.references if not r.call}
    assert set(plain.values()) == {0}  # names not called keep no form


def test_two_forms_on_one_line_are_both_kept():
    text = "class A:\n    def f(self):\n        return self.go() or go() or x.go()\n"
    refs = extract_text("a.py", text, "python").to_file_symbols().references
    assert [(r.name, r.form) for r in refs if r.name == "go"] == [("go", SELF | BARE | OTHER)]


def test_links_survive_their_text_form_and_packing():
    links = extracted().file_links
    assert FileLinks.from_text(links.to_text()) == links
    packed = extracted()
    again = PackedSymbols.from_file_symbols(packed.to_file_symbols())
    assert again == packed
    assert FileLinks.from_text("garbage\nq\tx\tname\tchain\nb\tonly") == FileLinks()


def test_languages_without_receiver_rules_keep_bases_but_no_forms():
    csharp = "class Child : Base, IRunnable {\n  void Run() { Go(); this.Stop(); }\n}\n"
    packed = extract_text("Child.cs", csharp, "csharp")
    assert packed.file_links.bases == (("Child", ("Base", "IRunnable")),)
    assert packed.forms == b""
    assert {r.form for r in packed.to_file_symbols().references} == {0}


def test_java_calls_record_their_receivers():
    java = textwrap.dedent(
        """\
        import com.acme.Gateway;
        class Child extends Base implements Runnable, Comparable<Child> {
          private final Ledger ledger;
          void run(Account account) {
            go(); this.stop(); super.run(); Gateway.open(); String.valueOf(1);
            account.close(); ledger.post(); this.ledger.post(); Helper.make(); other.x2();
          }
        }
        """
    )
    packed = extract_text("Child.java", java, "java")
    assert packed.file_links.bases == (("Child", ("Base", "Runnable", "Comparable")),)
    calls = {r.name: r.form for r in packed.to_file_symbols().references if r.call}
    assert calls == {
        "go": BARE,
        "stop": SELF,
        "run": SUPER,
        "open": QUALIFIED,  # imported
        "valueOf": BUILTIN,  # java.lang
        "close": TYPED,
        "post": TYPED,  # the field `ledger`, bare and as `this.ledger`
        "make": QUALIFIED,  # a class of the same package, by its capitalised name
        "x2": OTHER,
    }
    links = packed.file_links
    assert links.types(6, "close") == [("account", "Account")]
    assert links.types(6, "post") == [("ledger", "Ledger"), ("this.ledger", "Child>ledger")]
    assert links.fields == (("Child", "ledger", "Ledger"),)


def test_dotted_names_only():
    assert dotted("a . b") == "a.b"
    assert dotted("Foo::Bar") == "Foo.Bar"
    assert dotted("\\App\\Models\\User") == "App.Models.User"
    assert dotted("f()") == ""
    assert dotted("x[0]") == ""
