"""Which language a file is written in, judged by its name alone.

`language_for` answers with a short language name, or None when the file is
not a text format worth indexing (images, archives, lock files, minified
bundles, unknown extensions). The tree-sitter languages (`SYNTAX_LANGUAGES`)
name their own files in `bot.code.registry` and are chunked along definitions;
the file types below are not parsed: "markdown" is chunked by headings,
everything else by line windows.
"""

from __future__ import annotations

from bot.code.registry import LANGUAGES, SYNTAX_LANGUAGES

__all__ = ["SYNTAX_LANGUAGES", "language_for"]

_OTHER_EXTENSIONS: dict[str, str] = {
    # chunked by headings
    "md": "markdown",
    "markdown": "markdown",
    "mdx": "markdown",
    # chunked by line windows
    "txt": "text",
    "text": "text",
    "rst": "rst",
    "rest": "rst",
    "adoc": "asciidoc",
    "asciidoc": "asciidoc",
    "org": "org",
    "tex": "tex",
    "yml": "yaml",
    "yaml": "yaml",
    "toml": "toml",
    "json": "json",
    "jsonc": "json",
    "json5": "json",
    "ini": "ini",
    "cfg": "ini",
    "conf": "ini",
    "properties": "ini",
    "xml": "xml",
    "xsd": "xml",
    "xsl": "xml",
    "plist": "xml",
    "sh": "shell",
    "bash": "shell",
    "zsh": "shell",
    "ksh": "shell",
    "fish": "shell",
    "ps1": "powershell",
    "psm1": "powershell",
    "bat": "batch",
    "cmd": "batch",
    "sql": "sql",
    "html": "html",
    "htm": "html",
    "xhtml": "html",
    "vue": "html",
    "svelte": "html",
    "css": "css",
    "scss": "css",
    "sass": "css",
    "less": "css",
    "kt": "kotlin",
    "kts": "kotlin",
    "swift": "swift",
    "scala": "scala",
    "sc": "scala",
    "groovy": "groovy",
    "gradle": "groovy",
    "lua": "lua",
    "pl": "perl",
    "pm": "perl",
    "r": "r",
    "jl": "julia",
    "dart": "dart",
    "ex": "elixir",
    "exs": "elixir",
    "erl": "erlang",
    "hrl": "erlang",
    "hs": "haskell",
    "ml": "ocaml",
    "mli": "ocaml",
    "fs": "fsharp",
    "fsi": "fsharp",
    "fsx": "fsharp",
    "clj": "clojure",
    "cljs": "clojure",
    "cljc": "clojure",
    "edn": "clojure",
    "m": "objc",
    "mm": "objc",
    "zig": "zig",
    "nim": "nim",
    "v": "verilog",
    "sv": "verilog",
    "vhd": "vhdl",
    "vim": "vim",
    "tf": "terraform",
    "tfvars": "terraform",
    "hcl": "terraform",
    "nix": "nix",
    "proto": "proto",
    "graphql": "graphql",
    "gql": "graphql",
    "cmake": "cmake",
    "mk": "makefile",
    "mak": "makefile",
    "dockerfile": "dockerfile",
    "j2": "template",
    "jinja": "template",
    "jinja2": "template",
    "tmpl": "template",
    "hbs": "template",
    "mustache": "template",
    "erb": "template",
}

# Case-sensitive extensions of the types not parsed (C++'s ".C" and ".H" are in the registry).
_OTHER_EXACT_EXTENSIONS = {"R": "r"}

_OTHER_FILENAMES: dict[str, str] = {
    "dockerfile": "dockerfile",
    "containerfile": "dockerfile",
    "makefile": "makefile",
    "gnumakefile": "makefile",
    "cmakelists.txt": "cmake",
    "jenkinsfile": "groovy",
    "procfile": "text",
    "readme": "text",
    "license": "text",
    "licence": "text",
    "copying": "text",
    "notice": "text",
    "authors": "text",
    "contributors": "text",
    "changelog": "text",
    "changes": "text",
    "history": "text",
    "todo": "text",
    "codeowners": "text",
    ".editorconfig": "ini",
    ".gitattributes": "text",
    ".bashrc": "shell",
    ".bash_profile": "shell",
    ".zshrc": "shell",
    ".profile": "shell",
}

# Generated files nobody asks questions about; indexing them only adds noise.
_SKIPPED_FILENAMES = frozenset(
    {
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "composer.lock",
        "gemfile.lock",
        "cargo.lock",
        "poetry.lock",
        "pipfile.lock",
        "uv.lock",
        "go.sum",
        "flake.lock",
        "packages.lock.json",
    }
)
_SKIPPED_SUFFIXES = (".min.js", ".min.css", ".map", ".bundle.js")

# The registered languages' names and the others' (tests check that none is claimed twice).
_EXTENSIONS = {e: lang.name for lang in LANGUAGES for e in lang.extensions} | _OTHER_EXTENSIONS
_EXACT_EXTENSIONS = {
    e: lang.name for lang in LANGUAGES for e in lang.exact_extensions
} | _OTHER_EXACT_EXTENSIONS
_FILENAMES = {n: lang.name for lang in LANGUAGES for n in lang.filenames} | _OTHER_FILENAMES


def language_for(path: str) -> str | None:
    """The language of `path` ("python", "markdown", "yaml", ...), or None to skip it."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    lower = name.lower()
    if not name or lower in _SKIPPED_FILENAMES or lower.endswith(_SKIPPED_SUFFIXES):
        return None
    if lower in _FILENAMES:
        return _FILENAMES[lower]
    if lower.startswith(("dockerfile.", "containerfile.")):
        return "dockerfile"
    if lower.startswith(("makefile.", "readme.", "license.", "changelog.")):
        return _by_extension(name) or _FILENAMES[lower.split(".", 1)[0]]
    return _by_extension(name)


def _by_extension(name: str) -> str | None:
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem.strip("."):
        return None  # no extension, or a dotfile such as ".env"
    return _EXACT_EXTENSIONS.get(ext) or _EXTENSIONS.get(ext.lower())
