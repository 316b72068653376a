from __future__ import annotations

import pytest

from bot.code.languages import SYNTAX_LANGUAGES, language_for
from bot.code.parsers import ts_language
from bot.code.registry import LANGUAGES


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("bot/core.py", "python"),
        ("stubs/typing.pyi", "python"),
        ("web/app.js", "javascript"),
        ("web/App.jsx", "javascript"),
        ("web/esm.mjs", "javascript"),
        ("web/api.ts", "typescript"),
        ("web/View.tsx", "tsx"),
        ("cmd/main.go", "go"),
        ("src/Main.java", "java"),
        ("src/lib.rs", "rust"),
        ("src/ring.c", "c"),
        ("include/ring.h", "c"),
        ("src/matrix.cpp", "cpp"),
        ("src/matrix.hpp", "cpp"),
        ("src/legacy.C", "cpp"),
        ("src/Hub.cs", "csharp"),
        ("lib/flags.rb", "ruby"),
        ("Rakefile", "ruby"),
        ("Gemfile", "ruby"),
        ("src/User.php", "php"),
        ("README.md", "markdown"),
        ("docs/guide.markdown", "markdown"),
        ("NOTES.txt", "text"),
        ("README", "text"),
        ("LICENSE", "text"),
        ("README.rst", "rst"),
        ("docs/index.rst", "rst"),
        (".github/workflows/ci.yml", "yaml"),
        ("pyproject.toml", "toml"),
        ("package.json", "json"),
        ("scripts/deploy.sh", "shell"),
        ("db/schema.sql", "sql"),
        ("web/index.html", "html"),
        ("web/site.css", "css"),
        ("app/Main.kt", "kotlin"),
        ("ios/App.swift", "swift"),
        ("src/Job.scala", "scala"),
        ("nvim/init.lua", "lua"),
        ("Dockerfile", "dockerfile"),
        ("deploy/Dockerfile.prod", "dockerfile"),
        ("Makefile", "makefile"),
        ("build/rules.mk", "makefile"),
        ("CMakeLists.txt", "cmake"),
        ("C:\\work\\repo\\tool.py", "python"),
    ],
)
def test_language_for(path: str, expected: str) -> None:
    assert language_for(path) == expected


@pytest.mark.parametrize(
    "path",
    [
        "logo.png",
        "dist/app.min.js",
        "dist/app.js.map",
        "archive.tar.gz",
        "package-lock.json",
        "yarn.lock",
        "Cargo.lock",
        "poetry.lock",
        "go.sum",
        ".env",
        ".gitignore",
        "bin/tool",
        "data.bin",
        "",
        "dir/",
    ],
)
def test_files_we_do_not_index(path: str) -> None:
    assert language_for(path) is None


def test_every_syntax_language_has_a_working_grammar() -> None:
    assert {lang.name for lang in LANGUAGES} == SYNTAX_LANGUAGES
    for name in SYNTAX_LANGUAGES:
        assert ts_language(name).abi_version >= 13
