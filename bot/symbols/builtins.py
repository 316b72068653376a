"""What each language provides without an import: global objects, functions, standard roots.

A call on one of these names, when the file does not bind the name itself (no import,
no definition, no variable of a stated type), reaches the language or its runtime, not
the repository: `JSON.stringify(...)`, `Math.max(...)`, `String.valueOf(...)`,
`std::mem::swap(...)`, `str.join(...)`. "Who calls X" leaves those out. Only names
whose members code calls are listed; a bare builtin function (`len`, `parseInt`) is
judged where it is called (`bot.retrieval.symbol_calls`).
"""

from __future__ import annotations

import builtins

_ECMASCRIPT = frozenset(
    """Array ArrayBuffer Atomics BigInt BigInt64Array BigUint64Array Boolean DataView Date
    Error EvalError FinalizationRegistry Float32Array Float64Array Function Int16Array
    Int32Array Int8Array Intl Iterator JSON Map Math Number Object Promise Proxy RangeError
    ReferenceError Reflect RegExp Set SharedArrayBuffer String Symbol SyntaxError TypeError
    URIError Uint16Array Uint32Array Uint8Array Uint8ClampedArray WeakMap WeakRef WeakSet
    globalThis""".split()
)
# Node.js and the web platform: present in every file of a program that runs there.
_RUNTIME = frozenset(
    """AbortController AbortSignal Blob Buffer DOMException FormData Headers ReadableStream
    Request Response TextDecoder TextEncoder TransformStream URL URLSearchParams
    WritableStream console crypto document localStorage location navigator performance
    process sessionStorage window""".split()
)
_JAVA_LANG = frozenset(
    """Boolean Byte Character Class ClassLoader Double Enum Float Integer Long Math Number
    Object Runtime Short StrictMath String StringBuilder StringBuffer System Thread
    ThreadLocal Throwable""".split()
)
_CSHARP = frozenset(
    """Array Console Convert DateTime Enum Environment GC Guid Math Object String
    StringComparer Task TimeSpan Type""".split()
)
_RUST_PRELUDE = frozenset("Box Option Result String Vec".split())
_RUST_CRATES = frozenset("alloc core std".split())
_PYTHON = frozenset(
    name for name in dir(builtins) if isinstance(getattr(builtins, name), type)
) - frozenset({"self"})

# Receivers (as written) that are a builtin in each language when the file does not bind them.
GLOBAL_OBJECTS: dict[str, frozenset[str]] = {
    "python": _PYTHON,
    "javascript": _ECMASCRIPT | _RUNTIME,
    "typescript": _ECMASCRIPT | _RUNTIME,
    "tsx": _ECMASCRIPT | _RUNTIME,
    "java": _JAVA_LANG,
    "csharp": _CSHARP,
    "rust": _RUST_PRELUDE | _RUST_CRATES,
}

# The type of a literal receiver (`"a".join(...)`, `[].concat(...)`), by literal node type.
LITERAL_TYPES: dict[str, str] = {
    "string": "str",  # Python; JavaScript's strings are `string` too (see below)
    "concatenated_string": "str",
    "list": "list",
    "dictionary": "dict",
    "set": "set",
    "template_string": "String",
    "array": "Array",
    "object": "Object",
    "regex": "RegExp",
    "interpreted_string_literal": "string",
    "raw_string_literal": "string",
    "string_literal": "String",
    "character_literal": "char",
}
_JS_LITERALS = {"string": "String"}


def literal_type(language: str, node_type: str) -> str:
    """The builtin type of a literal of `node_type` in `language`, "" if it is no literal."""
    if language in ("javascript", "typescript", "tsx") and node_type in _JS_LITERALS:
        return _JS_LITERALS[node_type]
    return LITERAL_TYPES.get(node_type, "")


# Functions every file can call bare, per language (a call of one reaches the language).
FUNCTIONS: dict[str, frozenset[str]] = {
    "python": frozenset(dir(builtins)),
    "javascript": frozenset(
        """clearInterval clearTimeout decodeURI decodeURIComponent encodeURI encodeURIComponent
        eval fetch isFinite isNaN parseFloat parseInt queueMicrotask require setImmediate
        setInterval setTimeout structuredClone""".split()
    ),
    "go": frozenset(
        """append cap clear close complex copy delete imag len make max min new panic print
        println real recover""".split()
    ),
}
FUNCTIONS["typescript"] = FUNCTIONS["tsx"] = FUNCTIONS["javascript"]


def standard_module(language: str, module: str) -> bool:
    """Whether an import of `module` (as written) names the language's standard library."""
    if language == "go":  # module paths outside the standard library start with a domain
        first = module.split("/")[0]
        return bool(first) and "." not in first
    if language == "rust":
        return module.replace("::", ".").split(".")[0] in _RUST_CRATES
    if language == "java":
        return module.startswith(("java.", "javax.", "jdk.", "sun."))
    if language in ("javascript", "typescript", "tsx"):
        return module.startswith("node:")
    return False
