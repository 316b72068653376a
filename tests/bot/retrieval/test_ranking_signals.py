"""Ranking signals that go beyond bag-of-words: an issue's subject line and traceback paths."""

from __future__ import annotations

import random
from pathlib import Path

from bot.core import CLI, Core
from bot.retrieval.blend import Mentions as _Mentions
from tests.support.trees import index_files

NOISY_LOG = "\n".join(
    f"platform linux -- session collected item report terminal output line {n}" for n in range(30)
)


def _core(tmp_path: Path, files: dict[str, str]) -> Core:
    return index_files(tmp_path / "tree", files)


def test_the_subject_line_outweighs_pasted_output(tmp_path: Path) -> None:
    core = _core(
        tmp_path,
        {
            "proj/proxies.py": (
                "def proxy_auth_header(proxy_url):\n"
                '    """Build the Proxy-Authorization header for an authenticated proxy."""\n'
                "    return basic_auth(proxy_url)\n"
            ),
            "proj/terminal.py": (
                "def report_session(items):\n"
                '    """Write the terminal report: platform, session, collected items."""\n'
                "    return ['platform linux session collected item report output line']\n"
            ),
        },
    )
    try:
        question = f"Proxy authentication header is wrong\n\nI ran it and got:\n{NOISY_LOG}\n"
        hits = core.search(question, CLI, top_k=5)
        assert hits[0].chunk.path == "proj/proxies.py"
        # Without its subject line the same text is all about the terminal report.
        body_only = core.search(f"I ran it and got:\n{NOISY_LOG}\n", CLI, top_k=5)
        assert body_only[0].chunk.path == "proj/terminal.py"
    finally:
        core.close()


def _mentioned(path: str, mentioned: list[str]) -> bool:
    """The rule, written plainly: exactly, by a tail, or inside a longer path (with a dir)."""
    return any(
        path == m or path.endswith("/" + m.lstrip("/")) or ("/" in path and m.endswith("/" + path))
        for m in mentioned
    )


def test_traceback_paths_under_a_checkout_match_indexed_files() -> None:
    frame = "/home/me/work/pylint/pylint/config/arguments_manager.py"
    assert _Mentions([frame]).names("pylint/config/arguments_manager.py")
    assert _Mentions(["flask/app.py"]).names("src/flask/app.py")
    assert not _Mentions(["/home/me/project/setup.py"]).names("setup.py")  # too short to be sure
    other = ["/x/other_config/arguments_manager.py"]
    assert not _Mentions(other).names("config/arguments_manager.py")


def test_set_based_mention_matching_agrees_with_the_definition() -> None:
    rnd = random.Random(7)
    parts = ["a", "b", "src", "app.py", "x.py", "", "flask", "home"]

    def some_path() -> str:
        path = "/".join(rnd.choice(parts) for _ in range(rnd.randint(1, 5)))
        return ("/" if rnd.random() < 0.3 else "") + path

    for _ in range(5000):
        mentioned = [some_path() for _ in range(rnd.randint(0, 4))]
        path = some_path()
        assert _Mentions(mentioned).names(path) == _mentioned(path, mentioned), (path, mentioned)
