from datetime import UTC, datetime, timedelta

from bot.models import ID_MAX, Chunk, Freshness, chunk_id, file_prefix


def _chunk(path: str, text: str = "x = 1", start: int = 1) -> Chunk:
    return Chunk("repo", path, "python", start, start, "block", "", "", text, "abc")


def test_ids_are_content_derived_and_stable():
    a, b = _chunk("a.py"), _chunk("a.py")
    assert a.id == b.id and a.id.startswith("repo#a.py#")
    assert _chunk("a.py", "x = 2").id != a.id
    assert _chunk("a.py", start=2).id != a.id  # same text elsewhere is another chunk


def test_prefix_matches_ids_for_every_path_length():
    for n in range(440, 520):
        path = "d/" + "p" * n + ".py"
        cid = _chunk(path).id
        assert len(cid.encode()) <= ID_MAX
        assert cid.startswith(file_prefix("repo", path))


def test_odd_file_names_do_not_raise():
    path = "bad\udcff.py"
    assert chunk_id("repo", path, "d").endswith("#d")


def test_freshness_text():
    now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    f = Freshness("shop", "main", "abc1234def", now - timedelta(minutes=12), now)
    assert f.describe() == "shop main@abc1234, indexed 12 min ago"
    local = Freshness("notes", "", "", now - timedelta(hours=3), now)
    assert local.describe() == "notes working tree, indexed 3 h ago"
