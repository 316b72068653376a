"""Architecture facts and their diagram, over a real repository indexed into SQLite."""

from __future__ import annotations

import io
from typing import Any

import pytest
from PIL import Image

from adapters.cli.main import EXIT_USER_ERROR, main
from bot.answer.diagram import Diagram, Node, diagram_of, layers, mermaid, png
from bot.config import FileConfig, Settings
from bot.core import CLI, Core
from bot.models import FileEntry
from bot.retrieval.architecture import Architecture, ArchitectureReader, telling
from bot.retrieval.architecture_parts import plan_parts
from tests.support.layered_app import build_layered_app


@pytest.fixture
def relay(make_repo: Any) -> Core:
    repo = build_layered_app(make_repo("relay"))
    core = Core.from_settings(Settings(), FileConfig())
    core.index_repo(str(repo.path), name="relay")
    return core


def _architecture(core: Core) -> Architecture:
    [state] = core.index.repo_states()
    found = ArchitectureReader(core.index, core.symbols).of(state)
    assert found is not None
    return found


def test_parts_roles_dependencies_and_entry_points(relay: Core) -> None:
    arch = _architecture(relay)
    names = [p.name for p in arch.parts]
    assert sorted(names) == ["__init__.py", "handlers.py", "router.py", "server.py"]
    roles = {p.name: p.role.text for p in arch.parts if p.role}
    assert roles["router.py"] == "The router: maps a request path to its handler."
    assert roles["server.py"].startswith("The HTTP server")
    uses = {(arch.parts[e.source].name, arch.parts[e.target].name) for e in arch.edges}
    assert ("server.py", "router.py") in uses and ("router.py", "handlers.py") in uses
    assert ("handlers.py", "router.py") not in uses  # nothing there names the router
    assert not any("tests/" in f for p in arch.parts for f in p.files)
    why = {e.why for e in arch.entries}
    assert "console script `app`" in why  # the same `main`: named once, as declared
    [script] = [e for e in arch.entries if e.why == "console script `app`"]
    assert script.definition is not None and script.definition.symbol == "main"


def test_a_big_single_file_is_told_by_its_main_classes() -> None:
    from bot.symbols.model import SymbolDef

    manifest = {"web.py": FileEntry("web.py", "b", "python", tuple(f"c{i}" for i in range(50)))}
    ranked = [
        SymbolDef("r", "web.py", name, name, "class", start, start + size)
        for name, start, size in (("App", 10, 300), ("Router", 400, 200), ("Err", 700, 3))
    ]
    plans = plan_parts(manifest, ranked)
    assert [p.name for p in plans] == ["App (web.py)", "Router (web.py)", "Err (web.py)"]


def test_only_telling_names_make_a_dependency() -> None:
    assert telling("RouteContext") and telling("send_file") and telling("legacyArgs")
    assert not telling("retry") and not telling("split") and not telling("New")


def test_the_diagram_draws_and_writes_mermaid(relay: Core) -> None:
    drawn = diagram_of(_architecture(relay))
    text = mermaid([drawn])
    assert text.startswith("flowchart TD\n")
    node = {n.label: f"r0n{i}" for i, n in enumerate(drawn.nodes)}
    assert f"{node['server.py']} --> {node['router.py']}" in text
    assert f"{node['router.py']} --> {node['handlers.py']}" in text
    assert "classDef entry" in text  # server.py holds the entry points
    picture = Image.open(io.BytesIO(png(drawn)))
    assert picture.format == "PNG"
    rows = layers(drawn)
    top = [drawn.nodes[i].label for i in rows[0]]
    assert "server.py" in top and "handlers.py" not in top  # users above what they use
    colours = {c for _, c in picture.convert("RGB").getcolors(1 << 20) or []}
    assert (9, 105, 218) in colours  # the entry point's blue frame


def test_mermaid_labels_cannot_break_out_of_their_quotes() -> None:
    d = Diagram('a"b', (Node('x"]; click x call evil()', "<b>", False),), ())
    text = mermaid([d])
    assert '"]' not in text.split("[", 1)[1].rsplit('"]', 1)[0]
    assert "#quot;" in text and "#lt;b#gt;" in text


def test_an_overview_answer_carries_the_diagram(relay: Core) -> None:
    answer = relay.ask("I'm new here: how is this project organised?", CLI)
    assert "where to start" in answer.text and "router.py" in answer.text
    [diagram] = answer.attachments
    assert diagram.mime == "image/png" and diagram.data.startswith(b"\x89PNG")
    assert answer.citations  # roles and entry points are cited at their lines


def test_cli_map_writes_the_diagram(relay: Core, tmp_path: Any, capsys: Any) -> None:
    relay.close()
    out = tmp_path / "relay.png"
    assert main(["map", "relay", "--diagram", str(out)]) == 0
    assert Image.open(out).format == "PNG"
    assert main(["map", "relay", "--diagram"]) == 0
    assert capsys.readouterr().out.startswith("flowchart TD")
    assert main(["map", "relay", "--diagram", str(tmp_path / "relay.md")]) == 0
    assert (tmp_path / "relay.md").read_text().startswith("```mermaid\nflowchart TD")
    assert main(["map", "relay", "--diagram", str(tmp_path / "relay.gif")]) == EXIT_USER_ERROR
    assert main(["map", "relay", "--diagram", str(tmp_path / "no" / "x.png")]) == EXIT_USER_ERROR
    err = capsys.readouterr().err
    assert "not 'relay.gif'" in err and "Could not write the diagram" in err
    assert "Traceback" not in err


def test_the_model_reads_the_entry_point_first_and_the_parts_as_facts(make_repo: Any) -> None:
    from tests.servers.openai_fake import FakeOpenAI

    repo = build_layered_app(make_repo("relay"))
    with FakeOpenAI() as fake:
        settings = Settings(  # type: ignore[call-arg]
            OPENAI_API_KEY="sk-test-123456",
            OPENAI_BASE_URL=fake.base_url,
            CODECITE_EMBED_MODEL="none",
        )
        core = Core.from_settings(settings, FileConfig())
        core.index_repo(str(repo.path), name="relay")
        answer = core.ask("where should I start reading in this project?", CLI)
        core.close()
        prompt = fake.bodies("/chat/completions")[-1]["messages"][-1]["content"]
    first = next(line for line in prompt.split("\n") if line.startswith("<source-"))
    assert 'at="relay: app/server.py:L' in first and "(main)" in first
    assert "Architecture (exact, from the index" in prompt
    assert "part `router.py`" in prompt and "uses handlers.py" in prompt
    assert answer.attachments  # the picture goes with the model's answer too


def test_rust_module_docs_and_the_crate_root(make_repo: Any) -> None:
    # `//!` is a module's doc; `#[derive(...)]` above a struct is no role of its folder
    repo = make_repo("ferry")
    repo.write("Cargo.toml", '[package]\nname = "ferry"\nversion = "0.1.0"\n')
    repo.write("src/lib.rs", "//! Ferry: filters that route requests.\npub mod filter;\n")
    repo.write(
        "src/filter/mod.rs",
        "//! The Filter trait and its combinators.\nmod and;\npub trait Filter {}\n",
    )
    repo.write(
        "src/filter/and.rs",
        "#[derive(Clone, Copy, Debug)]\npub struct And<T, U> {\n    first: T,\n    second: U,\n}\n",
    )
    repo.write("src/server.rs", "/// The server.\npub fn serve() {}\n")
    repo.commit("crate")
    core = Core.from_settings(Settings(), FileConfig())
    core.index_repo(str(repo.path), name="ferry")
    arch = _architecture(core)
    roles = {p.name: p.role.text for p in arch.parts if p.role}
    assert roles.get("filter/") == "The Filter trait and its combinators.", roles
    assert not any("derive" in r for r in roles.values())
    assert ("src/lib.rs", "crate root (Cargo.toml)") in [(e.path, e.why) for e in arch.entries]


def test_a_library_class_named_after_the_project_is_where_to_start(make_repo: Any) -> None:
    repo = make_repo("soup")
    base = "src/main/java/org/soup/"
    repo.write(
        base + "Soup.java",
        "package org.soup;\n\n/** The front door: parse HTML into a Document. */\npublic class Soup {\n"
        "    public static Document parse(String html) {\n        return new Document(html);\n"
        "    }\n}\n",
    )
    repo.write(
        base + "Document.java",
        "package org.soup;\n\npublic class Document {\n    public Document(String html) {}\n}\n",
    )
    repo.write(
        base + "nodes/package-info.java",
        "/** The DOM: elements and text nodes. */\npackage org.soup.nodes;\n",
    )
    repo.write(base + "nodes/Node.java", "package org.soup.nodes;\n\npublic class Node {}\n")
    repo.commit("library")
    core = Core.from_settings(Settings(), FileConfig())
    core.index_repo(str(repo.path), name="soup")
    arch = _architecture(core)
    named = [e for e in arch.entries if e.why == "named after the project"]
    assert [e.definition.symbol for e in named if e.definition] == ["Soup"]
    roles = {p.name: p.role.text for p in arch.parts if p.role}
    assert roles.get("nodes/") == "The DOM: elements and text nodes.", roles
