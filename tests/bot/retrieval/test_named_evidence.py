"""What a question names leads the ranking: identifiers found verbatim, options where they are
defined, modules named after the concept, and code (not changelogs or templates) for a report.

Each test indexes a small repository written like the real ones (pytest, flask, xarray) and
asks through `Core.search`, the path every adapter takes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.core import CLI, Core
from bot.retrieval.evidence import VERBATIM_K, selectivity
from tests.support.reports import SHOW_VERSIONS
from tests.support.trees import index_files


@pytest.fixture
def index_tree(tmp_path: Path) -> Iterator[object]:
    cores: list[Core] = []

    def build(files: dict[str, str]) -> Core:
        core = index_files(tmp_path / f"tree{len(cores)}", files)
        cores.append(core)
        return core

    yield build
    for core in cores:
        core.close()


def paths(core: Core, question: str, k: int = 5) -> list[str]:
    return [h.chunk.path for h in core.search(question, CLI, top_k=k)]


# Unrelated modules, so that words have the rarity they have in a real repository.
OTHERS = {
    "src/_pytest/pathlib.py": "def bestrelpath(directory, dest):\n"
    '    """Return a string which is a relative path from directory to dest."""\n'
    "    return os.path.relpath(dest, directory)\n",
    "src/_pytest/capture.py": "class CaptureManager:\n"
    '    """The capture plugin: captures stdout and stderr while a test runs."""\n\n'
    "    def start_global_capturing(self):\n        self._global_capturing.start_capturing()\n",
    "src/_pytest/terminal.py": "def pytest_report_header(config):\n"
    '    """Lines shown at the top of the terminal report: platform and plugins."""\n'
    "    return [f'rootdir: {config.rootpath}']\n",
    "src/_pytest/warnings.py": "def catch_warnings_for_item(config, ihook, when, item):\n"
    '    """Context manager that catches warnings generated in the contained execution."""\n'
    "    with warnings.catch_warnings(record=True) as log:\n        yield\n",
}


MARKERS = '''"""Benchmark markers: which benchmark a marker belongs to."""


class BenchMarker:
    """A marker on a benchmark: its name and the bench it marks."""

    def __init__(self, bench, marker):
        self.bench = bench
        self.marker = marker


def marker_for_bench(bench):
    """The marker of a bench, creating the bench marker on first use."""
    return BenchMarker(bench, marker=f"bench-{bench}")


def bench_markers(benches):
    return [marker_for_bench(bench) for bench in benches]
'''

FILTERS = '''"""Which files are indexed."""


def skip_reason(path, size, max_file_bytes=1_000_000):
    _bench_marker_3 = 1  # one-line change
    if size > max_file_bytes:
        return "too large"
    return None


def is_binary(data):
    return b"\\0" in data[:8000]
'''


def test_an_identifier_found_verbatim_ranks_the_chunk_holding_it_first(index_tree) -> None:
    core = index_tree({"bench/markers.py": MARKERS, "bot/ingest/filters.py": FILTERS})
    hits = core.search("_bench_marker_3", CLI, top_k=5)
    assert hits[0].chunk.path == "bot/ingest/filters.py"
    assert "_bench_marker_3" in hits[0].chunk.text


APP = '''class Flask:
    def run(self, host=None, port=None, debug=None, load_dotenv=True, **options):
        """Runs the application on a local development server.

        :param debug: if given, enable or disable debug mode. See :attr:`debug`.
        """
        if debug is not None:
            self.debug = bool(debug)
        options.setdefault("use_debugger", self.debug)
        options.setdefault("use_reloader", self.debug)
        run_simple(host, port, self, **options)

    @property
    def debug(self):
        """Whether debug mode is enabled. When using ``flask run`` to start the
        development server, an interactive debugger will be shown for unhandled exceptions.
        """
        return self.config["DEBUG"]
'''

CLI_MODULE = '''import click


def _set_debug(ctx, param, value):
    # If the flag isn't provided, it will default to False. Don't use
    # that, let debug be set by env in that case.
    source = ctx.get_parameter_source(param.name)
    if source is not None and source in (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP):
        return None
    os.environ["FLASK_DEBUG"] = "1" if value else "0"
    return value


_debug_option = click.Option(
    ["--debug/--no-debug"],
    help="Set debug mode.",
    expose_value=False,
    callback=_set_debug,
)


@click.command("run", short_help="Run a development server.")
@click.option("--host", "-h", default="127.0.0.1", help="The interface to bind to.")
def run_command(info, host, port, reload, debugger):
    """Run a local development server."""
    run_simple(host, port, app, use_reloader=reload, use_debugger=debugger)
'''


def test_an_option_finds_the_code_that_defines_it(index_tree) -> None:
    core = index_tree({"src/flask/app.py": APP, "src/flask/cli.py": CLI_MODULE})
    hits = core.search("what does the --debug option of flask run do?", CLI, top_k=5)
    assert hits[0].chunk.path == "src/flask/cli.py"
    assert "--debug/--no-debug" in hits[0].chunk.text


ASSERTION_INIT = '''"""Support for presenting detailed information in failing assertions."""


class RewriteHook(Protocol):
    """The assertion rewrite hook as the assertion plugin sees it: it rewrites asserts."""

    def mark_rewrite(self, *names: str) -> None: ...


class DummyRewriteHook:
    """A no-op assertion rewrite hook, for when assertion rewriting is disabled."""

    def mark_rewrite(self, *names: str) -> None:
        pass
'''

# Long, busy definitions: the words of the question are a small part of each.
ASSERTION_REWRITE = '''"""Rewrite assertion AST to produce nice error messages."""


class AssertionRewritingHook(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """PEP302/PEP451 import hook which rewrites asserts."""

    def exec_module(self, module):
        assert module.__spec__ is not None
        fn = Path(module.__spec__.origin)
        state = self.config.stash[assertstate_key]
        self._rewritten_names[module.__name__] = fn
        write = not sys.dont_write_bytecode
        cache_dir = get_cache_dir(fn)
        if write:
            ok = try_makedirs(cache_dir)
            if not ok:
                write = False
                state.trace(f"read only directory: {cache_dir}")
        cache_name = fn.name[:-3] + PYC_TAIL
        pyc = cache_dir / cache_name
        co = _read_pyc(fn, pyc, state.trace)
        if co is None:
            state.trace(f"compiling {fn!r}")
            source_stat, co = _compile_module(fn, self.config)
            if write:
                self._writing_pyc = True
                try:
                    _write_pyc(state, co, source_stat, pyc)
                finally:
                    self._writing_pyc = False
        exec(co, module.__dict__)


class AssertionRewriter(ast.NodeVisitor):
    """Walks a module's AST and replaces each assert statement with statements that
    compute the values of its subexpressions and format them into the failure message."""

    def visit_Assert(self, assert_):
        if isinstance(assert_.test, ast.Tuple) and len(assert_.test.elts) >= 1:
            warnings.warn_explicit(PytestAssertRewriteWarning("tuple is always true"))
        self.statements = []
        self.variables = []
        self.variable_counter = itertools.count()
        self.stack = []
        self.expl_stmts = []
        self.push_format_context()
        top_condition, explanation = self.visit(assert_.test)
        negation = ast.UnaryOp(ast.Not(), top_condition)
        msg = self.pop_format_context(ast.Constant(explanation))
        err_name = ast.Name("AssertionError", ast.Load())
        exc = ast.Call(err_name, [msg], [])
        raise_ = ast.Raise(exc, None)
        self.statements.append(ast.If(negation, [raise_], []))
        for stmt in self.statements:
            ast.copy_location(stmt, assert_)
        return self.statements
'''


def test_the_module_named_after_the_concept_leads(index_tree) -> None:
    core = index_tree(
        {
            "src/_pytest/assertion/__init__.py": ASSERTION_INIT,
            "src/_pytest/assertion/rewrite.py": ASSERTION_REWRITE,
            **OTHERS,
        }
    )
    assert paths(core, "how does assertion rewriting work?", k=1) == [
        "src/_pytest/assertion/rewrite.py"
    ]


INTERP = '''def interp(self, coords=None, method="linear", assume_sorted=False, kwargs=None):
    """Interpolate a Dataset onto new coordinates."""
    variables = {}
    for name, var in self.variables.items():
        variables[name] = missing.interp(var, indexers, method, **kwargs)
    return self._replace_with_new_dims(variables, coord_names, indexes=indexes)
'''

PRINT_VERSIONS = '''"""Utility functions for printing version information."""


def show_versions(file=sys.stdout):
    """Print the versions of xarray and its dependencies: python, numpy, pandas, scipy,
    netCDF4, h5netcdf, dask, matplotlib, setuptools, pip and the system (OS, machine,
    processor, byteorder, LC_ALL, LANG, LOCALE, libhdf5, libnetcdf)."""
    print("\\nINSTALLED VERSIONS", file=file)
    print("------------------", file=file)
    for key, value in sys_info + deps_blob:
        print(f"{key}: {value}", file=file)
'''

REPORT = f"""Dataset.interp drops the attributes of data variables

After `ds.interp(x=new_x)` every data variable has empty attrs.

<details><summary>Output of <tt>xr.show_versions()</tt></summary>

{SHOW_VERSIONS}

</details>
"""


def test_a_report_ranks_code_above_its_boilerplate_changelog_and_templates(index_tree) -> None:
    core = index_tree(
        {
            "xarray/core/dataset.py": INTERP,
            "xarray/util/print_versions.py": PRINT_VERSIONS,
            "CHANGES.rst": "Bug fixes\n---------\n\n- ``Dataset.interp`` keeps the attrs of data"
            " variables (:issue:`7012`).\n- ``Dataset.interp`` no longer drops attrs.\n",
            ".github/ISSUE_TEMPLATE/bug.md": "What happened? Dataset attrs dropped?\n\n"
            "<details><summary>Output of xr.show_versions()</summary>\n\n"
            "INSTALLED VERSIONS\n\n</details>\n",
        }
    )
    ranked = list(dict.fromkeys(paths(core, REPORT, k=10)))
    assert ranked[0] == "xarray/core/dataset.py"
    assert ranked.index("xarray/core/dataset.py") < ranked.index("CHANGES.rst")
    assert "xarray/util/print_versions.py" not in ranked[:2]


SETUPSTATE = '''class SetupState:
    """Shared state for setting up test items and collectors in a session."""

    def teardown_exact(self, nextitem):
        """Teardown the current stack up until reaching nodes that nextitem also descends
        from, running the finalizers of each node on the way."""
        while self.stack:
            node, (finalizers, _) = self.stack.popitem()
            while finalizers:
                finalizers.pop()()
'''

FIXTURES = '''def fixture(fixture_function=None, *, scope="function", params=None, autouse=False):
    """Decorator to mark a fixture factory function; fixtures are shared within their
    scope (session, package, module, class or function)."""
    return FixtureFunctionMarker(scope=scope, params=params, autouse=autouse)
'''


def test_words_written_apart_meet_the_name_written_as_one(index_tree) -> None:
    core = index_tree(
        {"src/_pytest/runner.py": SETUPSTATE, "src/_pytest/scope.py": FIXTURES, **OTHERS}
    )
    # "torn down" shares no word with the teardown code: only "teardown" joins them
    found = [h.chunk.symbol for h in core.search("how are fixtures torn down?", CLI, top_k=2)]
    assert "SetupState" in found  # the class and its teardown_exact, one chunk


def test_an_identifier_written_everywhere_points_nowhere_in_particular() -> None:
    assert selectivity(0) == 0.0  # not in the index at all
    assert selectivity(1) == selectivity(5) == 1.0
    assert 0.0 < selectivity(30) < selectivity(10) < 1.0
    assert selectivity(VERBATIM_K) == 0.0
