"""The not-found benchmark end to end: two small repositories, each asked the other's questions."""

from __future__ import annotations

import json
from pathlib import Path

from bench import notfound
from tests.bench.clones import one_commit_clone

SHOP = {
    "shop/payment.py": (
        "def charge_card(gateway, card, amount, attempts=3):\n"
        '    """Charge a card, retrying a declined charge a few times."""\n'
        "    for _ in range(attempts):\n"
        "        result = gateway.charge(card, amount)\n"
        "        if result.ok:\n"
        "            return result\n"
        '    raise RuntimeError("charge declined")\n'
    ),
    "shop/cart.py": (
        "class Cart:\n"
        "    def total(self, discount=0):\n"
        '        """Sum of line prices, minus a percentage discount."""\n'
        "        return sum(self.prices) * (100 - discount) / 100\n"
    ),
}
WEATHER = {
    "weather/forecast.py": (
        "def hourly_forecast(station, hours=24):\n"
        '    """Predict temperature and rainfall at a station for the next hours."""\n'
        "    readings = station.barometer_readings()\n"
        "    return [extrapolate(readings, hour) for hour in range(hours)]\n"
    ),
    "weather/stations.py": (
        "class Station:\n"
        '    """A weather station: its barometer, thermometer and rain gauge."""\n'
        "\n"
        "    def barometer_readings(self):\n"
        "        return self.log.pressure\n"
    ),
}


def test_each_repository_is_asked_its_own_and_the_others_questions(tmp_path: Path) -> None:
    shop, weather = (
        one_commit_clone(tmp_path, "shop", SHOP),
        one_commit_clone(tmp_path, "weather", WEATHER),
    )
    rows = [
        ("shop-1", "acme/shop", shop, "Where is a declined card charge retried?"),
        ("weather-1", "acme/weather", weather, "How does the Station predict rainfall?"),
    ]
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        "\n".join(
            json.dumps({"id": i, "repo": r, "commit": c, "question": q, "gold_files": []})
            for i, r, c, q in rows
        )
        + "\n"
    )
    out = tmp_path / "out.json"
    code = notfound.main(
        ["--clones", str(tmp_path / "clones"), "--cases", str(cases), "--out", str(out)]
    )
    assert code == 0
    result = json.loads(out.read_text())
    by_id = {row["id"]: row for row in result["cases"]}
    for case_id, other in (("shop-1", "acme/weather"), ("weather-1", "acme/shop")):
        row = by_id[case_id]
        assert not row["right"]["flagged"], row["right"]["lead"]
        assert row["rotating"] == other
        wrong = row["wrong"][other]
        assert wrong["flagged"], wrong["lead"]
    assert result["summary"][0] == ["cases", "ALL", 2, 0.0, 1.0, 1.0]
    assert [r[0] for r in result["sweep"]] == list(notfound.SWEEP)  # one row each: one dataset
