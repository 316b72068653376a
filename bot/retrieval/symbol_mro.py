"""Method resolution orders: C3 linearization, as Python computes it, and a fallback.

`c3([A], [order of B, order of C, [B, C]])` is A's order when `class A(B, C)`; it is None
when the bases' orders cannot be merged (Python raises), and `depth_first` gives a usable
order instead. A cycle of bases (which Python forbids, and broken code has) ends, since a
class already in the order is not added again.
"""

from __future__ import annotations

from bot.symbols.model import SymbolDef


def c3(head: list[SymbolDef], orders: list[list[SymbolDef]]) -> list[SymbolDef] | None:
    """C3 linearization: `head` then the merge of `orders`; None when inconsistent."""
    pending = [list(o) for o in orders if o]
    out = list(head)
    while pending:
        for order in pending:
            candidate = order[0]
            if not any(candidate in other[1:] for other in pending):
                break
        else:
            return None
        if candidate not in out:  # a cycle can bring a class back: once is enough
            out.append(candidate)
        pending = [[c for c in o if c != candidate] for o in pending]
        pending = [o for o in pending if o]
    return out


def depth_first(cls: SymbolDef, orders: list[list[SymbolDef]]) -> list[SymbolDef]:
    out = [cls]
    for order in orders:
        out += [c for c in order if c not in out]
    return out
