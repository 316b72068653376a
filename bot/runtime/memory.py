"""Give memory the process has freed back to the operating system.

CPython returns its small-object arenas when they empty, but larger objects live in
glibc's heap, which keeps what they freed for reuse by later `malloc`s. A step that
allocates through `mmap` instead (numpy's large arrays) never reuses it, so its peak
stacks on top of what the previous step left behind. `malloc_trim` hands the free
pages back; elsewhere than glibc this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from collections.abc import Callable
from functools import cache


def release_free_memory() -> None:
    """Collect cycles, then return the C heap's free pages to the OS (glibc only)."""
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to trim
        return None
    return trim
