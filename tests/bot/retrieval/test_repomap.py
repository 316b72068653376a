from datetime import UTC, datetime

from bot.config import FileConfig, Settings
from bot.core import Core
from bot.index.local.index import LocalIndex
from bot.models import FileEntry, RepoState
from bot.retrieval.dirtree import build_tree, tree_lines
from bot.retrieval.repomap import MAP_TOKENS, RepoMap, RepoMapper, render_maps
from bot.symbols.model import RankedSymbol, SymbolDef, SymbolRef
from bot.text.counting import count_tokens
from tests.support.fake_symbols import FakeSymbols
from tests.support.shop import build_shop

PATHS = [
    "README.md",
    "setup.py",
    "src/app/__init__.py",
    "src/app/core.py",
    "src/app/views/home.py",
    "src/app/views/admin.py",
    "src/app/views/api.py",
    "tests/test_core.py",
    "tests/test_views.py",
    "docs/index.md",
]


def test_tree_counts_and_collapses_single_child_chains():
    root = build_tree(PATHS)
    assert root.total == len(PATHS)
    names = [d.name for d in root.dirs]
    assert names == ["src/app", "tests", "docs"]  # code first; `src` alone is collapsed
    assert [d.kind for d in root.dirs] == ["code", "test", "doc"]
    app = root.dirs[0]
    assert (app.total, app.direct, app.files) == (5, 2, ("__init__.py", "core.py"))
    assert [d.name for d in app.dirs] == ["views"]
    assert root.files == ("README.md", "setup.py")


def test_small_tree_is_shown_whole():
    assert tree_lines(build_tree(PATHS), lines=40, entries=8) == [
        "src/app/ (5 files)",
        "  views/ (3 files)",
        "    admin.py, api.py, home.py",
        "  __init__.py, core.py",
        "tests/ (2 files)",  # tests and docs are counted, not named
        "docs/ (1 file)",
        "README.md, setup.py",
    ]


def test_code_is_opened_before_bigger_test_and_doc_trees():
    paths = [f"tests/unit/t{i}.py" for i in range(300)] + [f"tests/e2e/t{i}.py" for i in range(9)]
    paths += [f"docs/guide/p{i}.md" for i in range(100)]
    paths += [f"pkg/core/m{i}.py" for i in range(5)] + [f"pkg/io/m{i}.py" for i in range(4)]
    paths += [f"pkg/m{i}.py" for i in range(30)]
    root = build_tree(paths)
    assert tree_lines(root, lines=6, entries=8) == [
        "pkg/ (39 files)",
        "  core/ (5 files)",
        "    m0.py, m1.py, m2.py, m3.py, m4.py",
        "  io/ (4 files)",
        "  m0.py, m1.py, m10.py, m11.py, m12.py, m13.py, … +24 more",
        "tests/ (309 files)",
        "docs/guide/ (100 files)",
    ]
    roomy = tree_lines(root, lines=20, entries=8)
    assert roomy[-4:] == [
        "tests/ (309 files)",
        "  unit/ (300 files)",
        "  e2e/ (9 files)",
        "docs/guide/ (100 files)",
    ]


def test_a_directory_that_does_not_fit_shows_fewer_entries():
    paths = [f"pkg/sub{i}/m.py" for i in range(10)] + ["README.md"]
    lines = tree_lines(build_tree(paths), lines=5, entries=8)
    assert lines == [
        "pkg/ (10 files)",
        "  sub0/ (1 file)",
        "  sub1/ (1 file)",
        "  sub2/ (1 file)",
        "  … 7 more directories (7 files)",
        "README.md",
    ]


def test_flat_directories_are_not_opened_to_repeat_their_count():
    paths = [f"data/file{i}.csv" for i in range(100)] + ["main.py"]
    assert tree_lines(build_tree(paths), lines=40, entries=8) == ["data/ (100 files)", "main.py"]


def _definition(repo: str, path: str, symbol: str, kind: str = "class") -> SymbolDef:
    return SymbolDef(repo, path, symbol.rsplit(".", 1)[-1], symbol, kind, 3, 30)


def _map(repo: str, files: int, symbols: int) -> RepoMap:
    paths = [f"{repo}_pkg/area{i % 9}/sub{i % 4}/module_{i}.py" for i in range(files)]
    top = tuple(
        RankedSymbol(_definition(repo, paths[i], f"Component{i}.handle_request"), 10.0 - i, 9 - i)
        for i in range(symbols)
    )
    return RepoMap(repo, files, (("python", files),), build_tree(paths), top)


def test_single_repository_map_lists_tree_and_cited_symbols():
    rendered = render_maps([_map("shop", 30, 5)])
    assert rendered.text.startswith("**shop**: 30 files (python 30)")
    assert "shop_pkg/ (30 files)\n  area0/ (4 files)" in rendered.text
    assert "Most referenced symbols:" in rendered.text
    first = rendered.symbols[0]
    assert (
        f"• class `Component0.handle_request` {first.path}:L3-L30 (used in 9 other files)"
        in rendered.text
    )
    assert len(rendered.symbols) == 5


def test_many_repositories_fit_the_budget_with_a_section_each():
    maps = [_map(f"service{n:02d}", 400, 12) for n in range(11)]
    rendered = render_maps(maps)
    assert count_tokens(rendered.text) <= MAP_TOKENS
    for m in maps[:8]:
        assert f"**{m.repo}**" in rendered.text
    assert "Also indexed, not mapped here: service08, service09, service10." in rendered.text
    # every listed symbol is in the text, so each can be cited
    assert rendered.symbols
    for d in rendered.symbols:
        assert f"{d.path}:L{d.start_line}-L{d.end_line}" in rendered.text
    assert rendered.text.count("```") % 2 == 0


def test_empty_scope():
    assert render_maps([]).text == "Nothing is indexed here yet."


class CountingIndex(LocalIndex):
    manifests = 0

    def manifest(self, repo: str) -> dict[str, FileEntry]:
        self.manifests += 1
        return super().manifest(repo)


def test_mapper_reads_each_commit_once(make_repo, tmp_path):
    repo = make_repo("shop")
    build_shop(repo)
    settings = Settings()
    index = CountingIndex(tmp_path / "index.sqlite")
    core = Core(settings, FileConfig(), index)
    core.index_repo(str(repo.path), name="shop")
    table = FakeSymbols(
        [_definition("shop", "shop/billing.py", "monthly_amount", "function")], index=index
    )
    mapper = RepoMapper(index, table)
    index.manifests = 0  # ingest reads it too

    (state,) = index.repo_states()
    first = mapper.map_of(state)
    again = mapper.map_of(state)
    assert again is first and index.manifests == 1
    assert first.files == 3 and dict(first.languages)["python"] == 2
    assert [d.name for d in first.root.dirs] == ["shop"]

    repo.write("shop/tax.py", "def vat(amount):\n    return amount * 0.2\n")
    repo.commit("tax")
    core.index_repo(str(repo.path), name="shop")
    index.manifests = 0
    (state,) = index.repo_states()
    assert mapper.map_of(state).files == 4  # a new commit is a new map
    assert index.manifests == 1
    core.close()


def test_mapper_without_a_symbol_table_still_maps_the_tree(tmp_path):
    index = LocalIndex(tmp_path / "index.sqlite")
    state = RepoState("empty", "/nowhere", "main", "abc", datetime.now(UTC))
    m = RepoMapper(index, None).map_of(state)
    assert (m.files, m.top) == (0, ())
    index.close()


def test_names_with_line_breaks_stay_on_their_line():
    lines = tree_lines(
        build_tree(["pkg/ok.py", "pkg/bad\nname.py", "evil\r\ndir/x.py"]), lines=9, entries=8
    )
    assert "  bad?name.py, ok.py" in lines
    assert "evil??dir/ (1 file)" in lines
    assert all("\n" not in line and "\r" not in line for line in lines)


def test_a_map_built_while_the_symbol_table_lags_is_not_kept(make_repo, tmp_path):
    """The ingest writes the index, then the symbol table (perhaps in another process): a map
    asked for in between has no key symbols, and must not stay so for the whole commit."""
    repo = make_repo("shop")
    build_shop(repo)
    index = LocalIndex(tmp_path / "index.sqlite")
    core = Core(Settings(), FileConfig(), index)
    core.index_repo(str(repo.path), name="shop")
    (state,) = index.repo_states()
    table = FakeSymbols(
        [_definition("shop", "shop/billing.py", "monthly_amount", "function")],
        [SymbolRef("shop", "shop/webhooks.py", "monthly_amount", 9, "retry", True)],
    )
    table.at = {"shop": "0" * 40}  # still at the previous commit
    mapper = RepoMapper(index, table)
    assert mapper.map_of(state).top == ()
    table.at = {"shop": state.commit}  # the writer caught up
    caught_up = mapper.map_of(state)
    assert [r.definition.name for r in caught_up.top] == ["monthly_amount"]
    assert mapper.map_of(state) is caught_up  # final now: kept
    core.close()
