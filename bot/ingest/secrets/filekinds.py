"""What kind of file a path names, as the scrubber reads values in it.

`code`: an unquoted value is an expression (`token = get_token()`); `plain` (scripts,
Dockerfiles, env and config files): an unquoted value is a string as written
(`ENV DJANGO_SECRET_KEY=*(vy...`); `other` (markup, templates, prose): either.
`is_config`: a configuration file, where a long random value ending a line is a secret
under any key.
"""

from __future__ import annotations

CODE, PLAIN, OTHER = "code", "plain", "other"

_CODE_SUFFIXES = (
    ".py", ".pyi", ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".go", ".java", ".kt", ".kts",
    ".rb", ".rs", ".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".php", ".swift", ".scala", ".m",
    ".lua", ".dart", ".ex", ".exs", ".clj", ".r", ".jl", ".hs", ".ml", ".fs", ".vue", ".svelte",
)  # fmt: skip
_PLAIN_SUFFIXES = (
    ".env", ".sh", ".bash", ".zsh", ".ini", ".cfg", ".conf", ".properties", ".toml", ".yaml",
    ".yml", ".tf", ".tfvars",
)  # fmt: skip


def file_kind(path: str) -> str:
    """`code`: an unquoted value is an expression; `plain` (scripts, Dockerfiles, config): it
    is a string as written; `other` (markup, templates, prose): either."""
    low = path.lower()
    if low.endswith(_CODE_SUFFIXES):
        return CODE
    name = low.rsplit("/", 1)[-1]
    plain = low.endswith(_PLAIN_SUFFIXES) or name.startswith((".env", "dockerfile"))
    return PLAIN if plain else OTHER


_CONFIG_SUFFIXES = (
    ".env", ".ini", ".cfg", ".conf", ".toml", ".yaml", ".yml", ".json", ".properties", ".tfvars",
)  # fmt: skip


def is_config(path: str) -> bool:
    name = path.rsplit("/", 1)[-1].lower()
    return name.endswith(_CONFIG_SUFFIXES) or name.startswith(".env") or name == "dockerfile"
