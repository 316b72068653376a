"""A bug report's boilerplate (versions, banners, checklists, links) is recognised; the rest stays."""

from __future__ import annotations

from bot.retrieval.boilerplate import linked_paths, without_boilerplate
from tests.support.reports import SHOW_VERSIONS

PIP_LIST = """\
Package        Version
-------------- -------
atomicwrites   1.3.0
more-itertools 7.0.0
pluggy         0.9.0"""

PIP_FREEZE = "attrs==19.3.0\nimportlib-metadata==1.6.0\npytest==5.4.2"

SPHINX_ENVIRONMENT = """\
Platform:              linux; (Linux-6.2.0-26-generic-x86_64-with-glibc2.35)
Python version:        3.11.4 (main, Jul  5 2023, 13:45:01) [GCC 11.2.0])
Python implementation: CPython
Sphinx version:        7.1.2
Docutils version:      0.20.1"""

BANNERS = """\
Python 3.9.9+ (heads/3.9-dirty:a2295a4, Dec 21 2021, 22:32:52)
[GCC 4.8.5 20150623 (Red Hat 4.8.5-44)]
Python 3.11.4 (main, Jun  7 2023, 12:45:48) [GCC 11.3.0] on linux
Type "help", "copyright", "credits" or "license" for more information.
Type 'copyright', 'credits' or 'license' for more information
IPython 8.14.0 -- An enhanced Interactive Python. Type '?' for help.
============================= test session starts ==============================
platform linux -- Python 3.6.10, pytest-5.4.2, py-1.8.1, pluggy-0.13.1
rootdir: /srv/project/repro
collected 1 item
_No response_
- [x] I searched the existing issues
<details><summary>Output of <tt>xr.show_versions()</tt></summary>
</details>"""


def kept(text: str) -> list[str]:
    return [line for line in without_boilerplate(text).split("\n") if line.strip()]


def test_environment_listings_are_blanked_whole() -> None:
    for listing in (SHOW_VERSIONS, PIP_LIST, PIP_FREEZE, SPHINX_ENVIRONMENT):
        report = f"Interp drops attrs\n\nAfter `ds.interp()` the attrs are gone.\n\n{listing}\n"
        assert kept(report) == ["Interp drops attrs", "After `ds.interp()` the attrs are gone."]


def test_banners_headers_checklists_and_collapsed_titles_are_blanked() -> None:
    assert kept(BANNERS) == []


def test_lines_keep_their_places() -> None:
    report = f"title\n{PIP_FREEZE}\nlast line"
    cleaned = without_boilerplate(report)
    assert cleaned.count("\n") == report.count("\n")
    assert cleaned.split("\n")[-1] == "last line"


def test_code_settings_and_prose_with_versions_stay() -> None:
    report = (
        "Timeout ignored since 2.3.1\n\n"
        "```python\n"
        'session.get(url, timeout=3.5)\nconfig = {"retries": 2, "backoff": 0.5}\n'
        "x: int = 1\n```\n"
        "timeout: 3.5\n"  # one setting with a number is not an environment listing
        "I use requests 2.3.1 with urllib3 1.26.\n"
    )
    assert kept(report) == [line for line in report.split("\n") if line.strip()]


def test_links_are_blanked_but_name_the_files_they_point_at() -> None:
    report = (
        "Wrong default\n\nSee https://github.com/acme/shop/blob/9f2c1e0/shop/webhooks.py#L19-L30"
        " and [the docs](https://docs.example.com/retry.html).\n"
        "- [x] Read https://github.com/acme/shop/blob/main/CONTRIBUTING.md\n"
    )
    assert "https" not in without_boilerplate(report)
    assert "webhooks" not in without_boilerplate(report)
    assert linked_paths(report) == ["shop/webhooks.py"]  # not the checklist's guide
    gitlab = "https://gitlab.com/acme/shop/-/blob/main/src/app.py?ref_type=heads"
    assert linked_paths(gitlab) == ["src/app.py"]
