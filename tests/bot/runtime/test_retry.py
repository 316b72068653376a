from __future__ import annotations

from email.utils import formatdate

import pytest

from bot.runtime.retry import (
    Retrier,
    Retry,
    RetryPolicy,
    is_retryable_status,
    retry_after_seconds,
)


class Transient(Exception):
    def __init__(self, after: float | None = None) -> None:
        super().__init__("transient")
        self.after = after


class Fatal(Exception):
    pass


def classify(exc: BaseException) -> Retry | None:
    return Retry(exc.after) if isinstance(exc, Transient) else None


class Flaky:
    """Fails with the given exceptions in turn, then returns "ok"."""

    def __init__(self, *failures: Exception) -> None:
        self.failures = list(failures)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return "ok"


def make(policy: RetryPolicy, rand: float = 0.0) -> tuple[Retrier, list[float]]:
    sleeps: list[float] = []
    return Retrier(policy, sleep=sleeps.append, rand=lambda: rand), sleeps


def test_success_needs_no_sleep() -> None:
    retrier, sleeps = make(RetryPolicy())
    fn = Flaky()
    assert retrier.call(fn, classify) == "ok"
    assert fn.calls == 1
    assert sleeps == []


def test_transient_failures_back_off_exponentially_then_succeed() -> None:
    retrier, sleeps = make(RetryPolicy(max_attempts=4, base_delay=0.5, multiplier=2, jitter=0.5))
    fn = Flaky(Transient(), Transient(), Transient())
    assert retrier.call(fn, classify) == "ok"
    assert fn.calls == 4
    assert sleeps == [0.5, 1.0, 2.0]  # rand() == 0: no jitter taken off


def test_jitter_shortens_the_wait_by_at_most_the_jitter_fraction() -> None:
    retrier, sleeps = make(RetryPolicy(base_delay=1.0, jitter=0.5), rand=0.999999)
    retrier.call(Flaky(Transient()), classify)
    assert sleeps[0] == pytest.approx(0.5, abs=1e-5)


def test_delay_is_capped() -> None:
    policy = RetryPolicy(max_attempts=10, base_delay=1.0, multiplier=10, max_delay=3.0)
    assert [policy.backoff(n, 0.0) for n in (1, 2, 3, 4)] == [1.0, 3.0, 3.0, 3.0]


def test_attempts_are_bounded_and_the_last_error_propagates() -> None:
    retrier, sleeps = make(RetryPolicy(max_attempts=3))
    last = Transient()
    fn = Flaky(Transient(), Transient(), last, Transient())
    with pytest.raises(Transient) as info:
        retrier.call(fn, classify)
    assert info.value is last
    assert fn.calls == 3
    assert len(sleeps) == 2


def test_non_retryable_error_is_raised_at_once() -> None:
    retrier, sleeps = make(RetryPolicy(max_attempts=5))
    fn = Flaky(Fatal("no"))
    with pytest.raises(Fatal):
        retrier.call(fn, classify)
    assert fn.calls == 1
    assert sleeps == []


def test_server_retry_after_is_honoured_exactly() -> None:
    retrier, sleeps = make(RetryPolicy(base_delay=0.1, jitter=1.0), rand=0.5)
    retrier.call(Flaky(Transient(after=7.0)), classify)
    assert sleeps == [7.0]


def test_retry_after_beyond_the_cap_ends_the_retries() -> None:
    retrier, sleeps = make(RetryPolicy(max_attempts=5, max_retry_after=30.0))
    fn = Flaky(Transient(after=120.0))
    with pytest.raises(Transient):
        retrier.call(fn, classify)
    assert fn.calls == 1
    assert sleeps == []


def test_one_attempt_means_no_retry() -> None:
    retrier, _ = make(RetryPolicy(max_attempts=1))
    fn = Flaky(Transient())
    with pytest.raises(Transient):
        retrier.call(fn, classify)
    assert fn.calls == 1


@pytest.mark.parametrize(
    "kwargs",
    [{"max_attempts": 0}, {"base_delay": -1}, {"jitter": 1.5}, {"multiplier": 0.5}],
)
def test_policy_rejects_nonsense(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        RetryPolicy(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("status", "retryable"),
    [
        *[(s, True) for s in (408, 409, 429, 500, 503, 599)],
        *[(s, False) for s in (200, 400, 401, 403, 404, 422)],
    ],
)
def test_retryable_statuses(status: int, retryable: bool) -> None:
    assert is_retryable_status(status) is retryable


def test_retry_after_header_forms() -> None:
    assert retry_after_seconds({}) is None
    assert retry_after_seconds({"Retry-After": "3"}) == 3.0
    assert retry_after_seconds({"retry-after": "1.5"}) == 1.5
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_seconds({"retry-after": "-4"}) == 0.0
    assert retry_after_seconds({"retry-after": "soon"}) is None
    now = 1_700_000_000.0
    date = formatdate(now + 42, usegmt=True)
    assert retry_after_seconds({"Retry-After": date}, now=now) == pytest.approx(42, abs=1)
    assert retry_after_seconds({"Retry-After": formatdate(now - 60, usegmt=True)}, now=now) == 0.0


def test_error_text_is_not_logged(caplog: pytest.LogCaptureFixture) -> None:
    retrier, _ = make(RetryPolicy(max_attempts=2))
    secret = Transient()
    secret.args = ("Incorrect API key provided: sk-very-secret",)
    with caplog.at_level("INFO"), pytest.raises(Transient):
        retrier.call(Flaky(secret, Transient()), classify, what="probe")
    assert "probe" in caplog.text
    assert "sk-very-secret" not in caplog.text
