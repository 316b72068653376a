"""The history evaluation's rules one by one: scoring, the peer's words, changelogs, symbols, gold."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.cases import CaseError
from bench.history_cases import check_paraphrase
from bench.history_changelog import Entry, numbers_in, parse_changelog
from bench.history_git import History, closing_pattern
from bench.history_gitgrep import query_words
from bench.history_scoring import CITED_DEPTH, aggregate, normalised, score_case
from bench.history_symbols import definitions
from tests.support.gitrepo import GitRepo

GOLD = "0123456789abcdef0123456789abcdef01234567"
OTHER = "fedcba9876543210fedcba9876543210fedcba98"


def _filler(i: int) -> str:
    return f"{i:040x}"


def test_a_gold_prefix_of_seven_digits_counts_and_a_shorter_one_does_not():
    assert score_case("when", [GOLD], [GOLD[:7]]).top1
    assert not score_case("when", [GOLD], [GOLD[:6]]).top5
    assert score_case("when", [GOLD], [GOLD.upper()]).top1  # case does not matter


def test_top5_looks_at_five_distinct_commits_and_depth_cuts_the_rest():
    cited = [OTHER, OTHER, *(_filler(i) for i in range(1, 4)), GOLD]
    score = score_case("why", [GOLD], cited)  # the repeat of OTHER collapses: GOLD is fifth
    assert (score.top1, score.top5, score.cited) == (False, True, 5)
    late = [_filler(i) for i in range(1, CITED_DEPTH + 1)] + [GOLD]
    assert score_case("since", [GOLD], late).share == 0.0  # the eleventh is not scored
    assert len(normalised([*late, "not-a-sha", ""])) == CITED_DEPTH


def test_exact_is_for_who_and_share_for_since():
    who = score_case("who", [GOLD], [GOLD, OTHER])
    assert (who.exact, who.share) == (True, None)
    assert score_case("when", [GOLD], [GOLD]).exact is None
    since = score_case("since", [GOLD, OTHER], [GOLD, _filler(1), OTHER, _filler(2)])
    assert since.share == 0.5 and since.exact is None
    assert score_case("since", [GOLD], []).share == 0.0  # citing nothing is not a free pass


def test_aggregate_means_each_measure_over_the_cases_it_applies_to():
    scores = [score_case("who", [GOLD], [GOLD]), score_case("when", [GOLD], [OTHER])]
    out = aggregate(scores)
    assert (out["n"], out["top1"], out["exact"], out["share"]) == (2, 0.5, 1.0, None)


def test_the_peer_searches_content_words_only():
    words = query_words("Why does `URL.build` reject upper-case hosts, and who changed it?")
    assert words == ["url.build", "reject", "upper-case", "hosts"]
    assert query_words("who last changed --no-require-git's docs since 14.0.0?") == [
        "--no-require-git",
        "docs",
        "14.0.0",
    ]
    assert query_words("when was the reloader fixed? the Reloader, I mean") == [
        "reloader",
        "fixed",
        "mean",
    ]


def test_markdown_entries_with_nested_items_and_links():
    text = (
        "# Changelog\n\n## 2.1.0 / 2024-01-01\n\n### Fixes\n\n"
        "* [BUG #30](https://github.com/o/r/issues/31): globs like `foo/**`\n"
        "  now match the contents only.\n"
        "  - a nested note naming #32\n"
        "* Colour escapes &#35;123 are not numbers.\n\n"
        "Some paragraph with #99 outside any item.\n"
    )
    entries = parse_changelog(text)
    assert [(e.version, e.line, e.numbers) for e in entries] == [
        ("2.1.0 / 2024-01-01", 7, (30, 31, 32)),
        ("2.1.0 / 2024-01-01", 10, ()),
    ]
    assert entries[0].text.startswith("[BUG #30](https://github.com/o/r/issues/31): globs")


def test_towncrier_rst_entries_keep_their_related_issues_block():
    text = (
        "v1.9.0\n======\n\nBug fixes\n---------\n\n"
        "- Fixed ``update_query()`` dropping the query\n  -- by :user:`someone`.\n\n"
        "  *Related issues and pull requests on GitHub:*\n  :issue:`845`, :pr:`846`.\n\n"
        "- Second entry (:issue:`7`)\n"
    )
    entries = parse_changelog(text)
    assert [(e.version, e.numbers) for e in entries] == [("v1.9.0", (845, 846)), ("v1.9.0", (7,))]
    assert numbers_in("see pull request ``#973`` and /pull/974") == (973, 974)


def test_definitions_python_decorators_and_methods():
    source = "import x\n\n\n@decorate\ndef top():\n    pass\n\n\nclass A:\n    def m(self):\n        return 1\n"
    found = [(s.name, s.start, s.end) for s in definitions("pkg/mod.py", source)]
    assert found == [("top", 4, 6), ("A", 9, 11), ("A.m", 10, 11)]
    assert definitions("pkg/broken.py", "def (:\n") == []
    assert definitions("README.md", "# hi\n") == []


def test_definitions_go_rust_and_javascript():
    go = "package p\n\nfunc (r *Registry) Gather() error {\n\treturn nil\n}\n\nfunc New() {}\n"
    assert [(s.name, s.start, s.end) for s in definitions("p/r.go", go)] == [
        ("Registry.Gather", 3, 5),
        ("New", 7, 7),
    ]
    rust = (
        "impl<T> Walk<T> {\n    fn build(&self) {}\n}\nfn top() {}\n"
        "#[cfg(test)]\nmod tests {\n    fn helper() {}\n}\n"
    )
    assert [s.name for s in definitions("src/walk.rs", rust)] == ["Walk::build", "top"]
    js = (
        "Runner.prototype.run = function (fn) {\n  return fn();\n};\n"
        "class Suite {\n  bail(v) {\n    return v;\n  }\n}\n"
        "module.exports = function () {};\nconst helper = () => 1;\n"
    )
    assert [(s.name, s.start) for s in definitions("lib/runner.js", js)] == [
        ("Runner.prototype.run", 1),
        ("Suite.bail", 5),
        ("helper", 10),
    ]


def test_closing_keywords_name_numbers_of_the_same_repository_only():
    closes = closing_pattern("acme/shop")
    text = (
        "Fixes #1, closes: #2 and resolved https://github.com/acme/shop/issues/3\n"
        "fix https://github.com/other/repo/issues/4, see #5, regressed in #6"
    )
    assert closes.findall(text) == ["1", "2", "3"]


def test_history_names_squash_merge_and_closing_commits_but_not_reverts(tmp_path: Path):
    repo = GitRepo(tmp_path / "r")
    repo.write("a.txt", "1")
    squash = repo.commit("Add a (#10)")
    repo.write("a.txt", "2")
    revert = repo.commit('Revert "Add a (#10)"')
    repo.write("a.txt", "3")
    closing = repo.commit("Tidy a\n\nFixes #11, see #12")
    history = History.read(repo.path / ".git", "acme/shop", repo.head())
    assert history.naming(10) == {squash: "squash"}
    assert revert not in history.naming(10)
    assert history.naming(11) == {closing: "closes"}
    assert history.naming(12) == {}  # mentioned, not fixed
    assert history.gold_for([10, 11]) == {squash: "squash #10", closing: "closes #11"}


def test_a_question_may_not_name_the_number_or_paste_the_entry():
    entry = Entry("1.0", 3, "Add the --dry-run option. #4640", (4640,))
    check_paraphrase("ok", "when was --dry-run added?", entry)
    with pytest.raises(CaseError, match="names #4640"):
        check_paraphrase("n", "what did 4640 change?", entry)
    with pytest.raises(CaseError, match="verbatim"):
        check_paraphrase("v", "Add the --dry-run option?", entry)
