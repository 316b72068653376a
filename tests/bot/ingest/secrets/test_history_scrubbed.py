"""Issue 28 item 5: commit history passes through the same scrubber as files.

Secrets from the round-three corpus (`bench/secrets_corpus`: values drawn from providers'
documented formats, planted in realistic files) are committed to a real repository: each
planted file is added in one commit and removed in the next (so its secret lives only in
the history's diffs), and the prose plantings are pasted into commit subjects and bodies.
Only values the scrubber redacts where the corpus plants them are used: the property
tested is that history loses every secret a file would, not the scrubber's reach. After
`codecite index` (history on, its default), no secret is anywhere under CODECITE_HOME,
nor in `codecite log` or `search --json` output, by the corpus harness's own test (whole,
or a run of 12+ letters and digits of it, as written or lower-cased).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.secrets_corpus.plant import CONTEXTS, Planted, corpus
from bench.secrets_index_eval import home_bytes, score
from bot.ingest.diff_secrets import scrub_excerpt
from bot.ingest.history_log import EXCERPT_WIDTH
from bot.ingest.secrets import REDACTED, scrub
from tests.support.cli import run_cli
from tests.support.gitrepo import GitRepo
from tests.support.history_repo import commit_as

PER_CONTEXT = 2
SUBJECT_CONTEXTS = ("readme_line", "code_comment", "docstring")
BODY_CONTEXTS = ("md_table", "issue_template", "ini_comment")
START = 1_700_000_000
SHAPES = ("prefixed", "unprefixed", "hex_uuid", "short", "url", "jwt", "private_key")


def _scrubbed_in_place(planted: Planted) -> bool:
    out = scrub(planted.text, planted.path).text
    return not any(secret in out for secret in planted.secrets)


def _chosen() -> tuple[list[Planted], list[Planted], list[Planted]]:
    """Per context, the first values the scrubber redacts in their planted file: some for
    diffs (every context), others for subjects and bodies (the prose contexts)."""
    taken: dict[str, list[Planted]] = {context: [] for context in CONTEXTS}
    message_contexts = (*SUBJECT_CONTEXTS, *BODY_CONTEXTS)
    for planted in corpus():
        wanted = PER_CONTEXT * (2 if planted.context in message_contexts else 1)
        if len(taken[planted.context]) < wanted and _scrubbed_in_place(planted):
            taken[planted.context].append(planted)
    diffs = [p for ps in taken.values() for p in ps[:PER_CONTEXT]]
    for shape in SHAPES:  # and every shape (JWTs, private keys) at least twice
        have = sum(p.fmt.shape == shape for p in diffs)
        more = [p for p in corpus() if p.fmt.shape == shape and p not in diffs]
        diffs += [p for p in more if _scrubbed_in_place(p)][: max(0, PER_CONTEXT - have)]
    subjects = [p for c in SUBJECT_CONTEXTS for p in taken[c][PER_CONTEXT:]]
    bodies = [p for c in BODY_CONTEXTS for p in taken[c][PER_CONTEXT:]]
    return diffs, subjects, bodies


def _subject(planted: Planted) -> str:
    return next(line for line in planted.text.splitlines() if planted.value in line).strip()


def _build(repo: GitRepo, diffs: list[Planted], subjects: list[Planted], bodies: list[Planted]):  # type: ignore[no-untyped-def]
    repo.write("README.md", "# demo\n\nRelease notes live in the history.\n")
    commit_as(repo, "Start the demo", "Ann", START)
    when = START
    for planted in diffs:
        when += 3600
        repo.write(planted.path, planted.text)
        commit_as(repo, f"Add {planted.path}", "Bob", when)
        repo.remove(planted.path)
        commit_as(repo, f"Remove {planted.path}: it held a secret", "Ann", when + 60)
    for planted in subjects:
        when += 3600
        repo.write("NOTES.md", f"# notes\n\n{planted.canary}\n")
        commit_as(repo, _subject(planted), "Cid", when)
    for planted in bodies:
        when += 3600
        repo.write("NOTES.md", f"# notes\n\n{planted.canary}\n")
        commit_as(repo, f"Document the staging setup\n\n{planted.text}", "Dee", when)


@pytest.fixture(scope="module")
def chosen() -> tuple[list[Planted], list[Planted], list[Planted]]:
    return _chosen()


def test_the_history_holds_corpus_secrets_of_every_context(chosen) -> None:  # type: ignore[no-untyped-def]
    """The material is what it claims: every context in a diff, prose in messages."""
    diffs, subjects, bodies = chosen
    assert {p.context for p in diffs} == set(CONTEXTS)
    assert len(subjects) == PER_CONTEXT * len(SUBJECT_CONTEXTS)
    assert len(bodies) == PER_CONTEXT * len(BODY_CONTEXTS)
    assert {p.fmt.shape for p in diffs} == set(SHAPES)


def test_no_corpus_secret_from_messages_or_diffs_is_stored_or_shown(
    make_repo, tmp_path: Path, chosen
) -> None:  # type: ignore[no-untyped-def]
    diffs, subjects, bodies = chosen
    planted = [*diffs, *subjects, *bodies]
    ids = {p.id for p in planted}
    repo = make_repo("demo")
    _build(repo, diffs, subjects, bodies)
    home = tmp_path / "home"
    indexed = run_cli(home, "index", str(repo.path))
    assert indexed.returncode == 0, indexed.stderr

    logged = run_cli(home, "log", "demo")
    assert logged.returncode == 0, logged.stderr
    assert "Remove " in logged.stdout and "Document the staging setup" in logged.stdout
    shown = [logged.stdout]
    for p in diffs[::20]:
        by_path = run_cli(home, "log", "demo", p.path)
        assert by_path.returncode == 0, by_path.stderr
        shown.append(by_path.stdout)
    for p in [subjects[0], bodies[0], *diffs[::20]]:
        found = run_cli(
            home, "search", f"when was the {p.fmt.provider} {p.fmt.kind} changed?", "--json"
        )
        assert found.returncode == 0, found.stderr
        shown.append(found.stdout)
    assert '"kind": "commit"' in "".join(shown)  # the searches reached the history

    stored = home_bytes(home)
    assert b"Document the staging setup" in stored  # the history was written here
    # Each file value's canary reached the index of diffs: what was around it is kept.
    assert sum(p.canary.encode() in stored for p in diffs) >= len(diffs) // 2
    leaks = {
        "stored under CODECITE_HOME": score("home", 0.0, "", stored).kept & ids,
        "shown by log or search": score("shown", 0.0, "", "\n".join(shown).encode()).kept & ids,
    }
    described = {
        where: sorted(
            f"{p.id} {p.fmt.provider}/{p.fmt.kind} in {p.context}" for p in planted if p.id in kept
        )
        for where, kept in leaks.items()
    }
    assert not any(leaks.values()), described


def test_an_excerpt_is_scrubbed_whole_then_cut_and_a_cut_key_block_is_still_a_key() -> None:
    """What the history stores of a diff: a key block cut by the excerpt's line limit
    loses every body line; a line longer than the stored width is scrubbed before it is
    cut (a JWT cut first keeps its head); markers and the line count stay."""
    key = next(p for p in corpus() if p.context == "pem_in_markdown")
    jwt = next(p for p in corpus() if p.fmt.shape == "jwt" and len(p.value) > EXCERPT_WIDTH)
    lines = [f"{key.path}:", *(f"+{line}" for line in key.text.splitlines()[:12])]
    lines += [f"{jwt.path}:", *(f"-{line}" for line in jwt.text.splitlines())]
    excerpt = "\n".join(lines)
    out = scrub_excerpt(excerpt, EXCERPT_WIDTH)
    assert out.count("\n") == excerpt.count("\n")
    assert all(line[:1] in "+-" or line.endswith(":") for line in out.splitlines())
    assert max(map(len, out.splitlines())) <= EXCERPT_WIDTH
    assert not score("excerpt", 0.0, "", out.encode()).kept & {key.id, jwt.id}
    assert "-----BEGIN" in out and jwt.canary in out  # what is around them stays


def test_the_changed_lines_of_a_file_the_index_never_reads_are_all_redacted() -> None:
    """A `.env` diff is as private as the `.env` file: no line of it, secret-shaped or not."""
    excerpt = "deploy/.env:\n+LOG_LEVEL=debug\n-REGION=eu-west-1\nREADME.md:\n+LOG_LEVEL=debug"
    assert scrub_excerpt(excerpt, EXCERPT_WIDTH).split("\n") == [
        "deploy/.env:",
        f"+{REDACTED}",
        f"-{REDACTED}",
        "README.md:",
        "+LOG_LEVEL=debug",
    ]
