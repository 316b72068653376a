"""The picture of an architecture: its parts as boxes, their dependencies as arrows.

Two renderings of one `Diagram`: Mermaid text (for the terminal, and as the picture's
alt text) and a PNG drawn with Pillow, whose wheels bundle FreeType and a default font,
so nothing is needed from the system. Pillow is imported only when a picture is drawn.

The layout is layered: parts that nothing else here depends on sit at the top, and each
part sits below the ones that use it (a cycle is cut where it returns to the parts that
use most and are used least); within a layer the boxes follow their users' order. Only
the strongest dependencies are drawn (`MAX_OUT` per part, one direction of a mutual
pair), so the picture stays readable.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.retrieval.architecture import Architecture, Edge

if TYPE_CHECKING:
    from PIL.ImageDraw import ImageDraw
    from PIL.ImageFont import FreeTypeFont, ImageFont

MAX_OUT = 3  # arrows drawn from one part
ROLE_CHARS = 38  # a box's role line
BOX_W, BOX_H, GAP_X, GAP_Y, MARGIN = 250, 62, 36, 64, 24
LANE = 14  # the spacing of arrows that go round the boxes on the right
TITLE_H = 34
INK, FRAME, ENTRY, ARROW, PAPER = "#1f2328", "#8c959f", "#0969da", "#57606a", "#ffffff"


Box = tuple[int, int, int, int]  # left, top, right, bottom


@dataclass(frozen=True, slots=True)
class Node:
    label: str
    role: str
    entry: bool  # holds an entry point: drawn with a blue frame


@dataclass(frozen=True, slots=True)
class Diagram:
    title: str
    nodes: tuple[Node, ...]
    edges: tuple[tuple[int, int], ...]  # (user, used)


def diagram_of(arch: Architecture) -> Diagram:
    entry_files = {e.path for e in arch.entries}
    nodes = tuple(
        Node(
            p.name,
            _short(p.role.text if p.role else ""),
            bool(entry_files & set(p.files)) and p.span is None,
        )
        for p in arch.parts
    )
    return Diagram(arch.repo, nodes, _strongest(arch.edges))


def _strongest(edges: Sequence[Edge]) -> tuple[tuple[int, int], ...]:
    weight = {(e.source, e.target): e.weight for e in edges}
    kept: list[tuple[int, int]] = []
    for source in sorted({e.source for e in edges}):
        out = sorted(
            (e for e in edges if e.source == source),
            key=lambda e: (-e.weight, e.target),
        )
        for e in out[:MAX_OUT]:
            back = weight.get((e.target, e.source), 0)
            if back > e.weight or (back == e.weight and e.target < e.source):
                continue  # the other direction is drawn
            kept.append((e.source, e.target))
    return tuple(kept)


def _short(text: str) -> str:
    if len(text) <= ROLE_CHARS:
        return text
    return text[: ROLE_CHARS - 1].rsplit(" ", 1)[0] + "…"


# -- Mermaid ------------------------------------------------------------------------------------


def mermaid(diagrams: Sequence[Diagram]) -> str:
    """One `flowchart TD`, a subgraph per repository when there are several."""
    lines = ["flowchart TD"]
    for k, d in enumerate(diagrams):
        indent = "  "
        if len(diagrams) > 1:
            lines.append(f'  subgraph r{k}["{_mermaid_text(d.title)}"]')
            indent = "    "
        for i, node in enumerate(d.nodes):
            label = _mermaid_text(node.label)
            if node.role:
                label += f"<br/><small>{_mermaid_text(node.role)}</small>"
            lines.append(f'{indent}r{k}n{i}["{label}"]')
        for a, b in d.edges:
            lines.append(f"{indent}r{k}n{a} --> r{k}n{b}")
        entries = [f"r{k}n{i}" for i, n in enumerate(d.nodes) if n.entry]
        if entries:
            lines.append(f"{indent}class {','.join(entries)} entry")
        if len(diagrams) > 1:
            lines.append("  end")
    if any(n.entry for d in diagrams for n in d.nodes):
        lines.append("  classDef entry stroke:#0969da,stroke-width:3px")
    return "\n".join(lines)


def _mermaid_text(text: str) -> str:
    """Text safe inside a quoted Mermaid label (entity codes for what would end it)."""
    out = text.replace("&", "#amp;").replace('"', "#quot;").replace("<", "#lt;")
    return out.replace(">", "#gt;").replace("\n", " ")


# -- PNG ----------------------------------------------------------------------------------------


def layers(d: Diagram) -> list[list[int]]:
    """Each node's layer: one below the deepest of its users (edges against part order, in a
    cycle, are ignored); then, within a layer, the order of their users' positions."""
    depth = [0] * len(d.nodes)
    forward = [(a, b) for a, b in d.edges if a != b]
    acyclic = _acyclic(len(d.nodes), forward)
    for _ in range(len(d.nodes)):
        changed = False
        for a, b in acyclic:
            if depth[b] < depth[a] + 1:
                depth[b], changed = depth[a] + 1, True
        if not changed:
            break
    rows: list[list[int]] = [[] for _ in range(max(depth, default=0) + 1)]
    for i, level in enumerate(depth):
        rows[level].append(i)
    for r in range(1, len(rows)):
        above = {n: x for x, n in enumerate(rows[r - 1])}

        def centre(n: int, above: dict[int, int] = above) -> float:
            xs = [above[a] for a, b in d.edges if b == n and a in above]
            return sum(xs) / len(xs) if xs else float(len(above))

        rows[r].sort(key=centre)
    return [row for row in rows if row]


def _acyclic(n: int, edges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """`edges` without those that close a cycle (found depth-first, users first)."""
    out_of: dict[int, list[int]] = {}
    for a, b in edges:
        out_of.setdefault(a, []).append(b)
    state = [0] * n  # 0 new, 1 on the stack, 2 done
    back: set[tuple[int, int]] = set()

    def visit(a: int) -> None:
        state[a] = 1
        for b in out_of.get(a, []):
            if state[b] == 1:
                back.add((a, b))
            elif state[b] == 0:
                visit(b)
        state[a] = 2

    # From the parts that use most and are used least: a cycle is cut where it returns to them.
    balance = [sum(b == i for _, b in edges) - sum(a == i for a, _ in edges) for i in range(n)]
    for a in sorted(range(n), key=lambda i: (balance[i], i)):
        if state[a] == 0:
            visit(a)
    return [e for e in edges if e not in back]


def png(d: Diagram) -> bytes:
    """The diagram as a PNG image."""
    from PIL import Image, ImageDraw, ImageFont  # a picture is rare: import it then

    rows = layers(d)
    boxes = _boxes(rows)
    detours = _detours(d.edges, boxes)
    right = max((b[2] for b in boxes.values()), default=0)
    width = max(right + MARGIN + LANE * len(detours), 360)
    height = 2 * MARGIN + TITLE_H + len(rows) * BOX_H + (len(rows) - 1) * GAP_Y
    image = Image.new("RGB", (width, height), PAPER)
    draw = ImageDraw.Draw(image)
    bold, small = ImageFont.load_default(size=15), ImageFont.load_default(size=12)
    draw.text((MARGIN, MARGIN), d.title, fill=INK, font=ImageFont.load_default(size=18))
    for a, b in d.edges:
        if a in boxes and b in boxes and a != b and (a, b) not in detours:
            _arrow(draw, boxes[a], boxes[b])
    for k, (a, b) in enumerate(detours):
        _detour(draw, boxes[a], boxes[b], right + LANE * (k + 1))
    for n, (x1, y1, x2, y2) in boxes.items():
        node = d.nodes[n]
        frame, thick = (ENTRY, 3) if node.entry else (FRAME, 1)
        draw.rounded_rectangle((x1, y1, x2, y2), radius=8, fill=PAPER, outline=frame, width=thick)
        draw.text((x1 + 10, y1 + 9), _fit(draw, node.label, bold), fill=INK, font=bold)
        draw.text((x1 + 10, y1 + 34), _fit(draw, node.role, small), fill=ARROW, font=small)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


def _boxes(rows: list[list[int]]) -> dict[int, Box]:
    widest = max((len(r) for r in rows), default=1)
    span_max = widest * BOX_W + (widest - 1) * GAP_X
    boxes: dict[int, Box] = {}
    for r, row in enumerate(rows):
        span = len(row) * BOX_W + (len(row) - 1) * GAP_X
        x0 = MARGIN + (span_max - span) // 2
        y = MARGIN + TITLE_H + r * (BOX_H + GAP_Y)
        for k, n in enumerate(row):
            x = x0 + k * (BOX_W + GAP_X)
            boxes[n] = (x, y, x + BOX_W, y + BOX_H)
    return boxes


def _detours(edges: Sequence[tuple[int, int]], boxes: dict[int, Box]) -> list[tuple[int, int]]:
    """Arrows a straight line would draw behind another box: they go round, on the right."""
    out = []
    for a, b in edges:
        if a not in boxes or b not in boxes or a == b:
            continue
        sx, dx = (boxes[a][0] + boxes[a][2]) / 2, (boxes[b][0] + boxes[b][2]) / 2
        low, high = sorted((boxes[a][3], boxes[b][1]))
        for n, (x1, y1, x2, y2) in boxes.items():
            if n in (a, b) or not (low < y1 and y2 < high):
                continue
            t = ((y1 + y2) / 2 - low) / max(high - low, 1)
            x = sx + (dx - sx) * t if boxes[a][3] <= boxes[b][1] else dx + (sx - dx) * t
            if x1 - 4 <= x <= x2 + 4:
                out.append((a, b))
                break
    return out


def _detour(draw: ImageDraw, src: Box, dst: Box, lane: int) -> None:
    sy, dy = (src[1] + src[3]) // 2, (dst[1] + dst[3]) // 2
    draw.line([(src[2], sy), (lane, sy), (lane, dy), (dst[2], dy)], fill=ARROW, width=2)
    draw.polygon([(dst[2], dy), (dst[2] + 9, dy - 4), (dst[2] + 9, dy + 4)], fill=ARROW)


def _fit(draw: ImageDraw, text: str, font: FreeTypeFont | ImageFont) -> str:
    """`text` cut with an ellipsis to fit a box."""
    while text and draw.textlength(text, font=font) > BOX_W - 20:
        text = text[:-2].rstrip() + "…"
    return text


def _arrow(draw: ImageDraw, src: Box, dst: Box) -> None:
    sx, sy = (src[0] + src[2]) // 2, src[3]
    dx, dy = (dst[0] + dst[2]) // 2, dst[1]
    if dst[1] == src[1]:  # same row: side to side
        mid = (src[1] + src[3]) // 2
        rightwards = dst[0] > src[0]
        sx, sy = (src[2] if rightwards else src[0]), mid
        dx, dy = (dst[0] if rightwards else dst[2]), mid
    elif dst[1] < src[1]:  # upwards: from the top of the user to the bottom of the used
        sy, dy = src[1], dst[3]
    draw.line([(sx, sy), (dx, dy)], fill=ARROW, width=2)
    angle = math.atan2(dy - sy, dx - sx)
    head = [
        (dx - 9 * math.cos(angle - 0.4), dy - 9 * math.sin(angle - 0.4)),
        (dx - 9 * math.cos(angle + 0.4), dy - 9 * math.sin(angle + 0.4)),
    ]
    draw.polygon([(dx, dy), *head], fill=ARROW)
