"""The arithmetic under every verdict `cost` gives (issue 57): the median's order-statistic
interval and the verdicts' rule "a claim only when the interval excludes no-change". The
expected figures are worked by hand from the binomial distribution, not taken from the code."""

from __future__ import annotations

import random

from dyn_inspect.inspector.analysis import spread as stats


def test_the_medians_interval_is_the_exact_order_statistic() -> None:
    # n = 10: P(2 <= B(10, 1/2) <= 8) = 1 - 2 * (1 + 10) / 1024 = 0.978515625 (k = 3 gives
    # 1 - 2 * 56 / 1024 = 0.890625 < 95 %): the 2nd smallest and the 2nd largest.
    s = stats.spread([float(x) for x in range(10, 0, -1)])
    assert s is not None
    assert (s.n, s.min, s.median, s.max) == (10, 1.0, 5.5, 10.0)
    assert (s.low, s.high) == (2.0, 9.0) and abs(s.confidence - 0.978515625) < 1e-12
    assert (s.q1, s.q3) == (3.25, 7.75)  # linear interpolation, as numpy's default
    # n = 5: no k reaches 95 %; [min, max] covers 1 - 2 / 32 = 0.9375 and says so
    five = stats.spread([3.0, 1.0, 2.0, 5.0, 4.0])
    assert five is not None and (five.low, five.high) == (1.0, 5.0) and five.confidence == 0.9375
    assert "94% CI" in five.text and "5 steps" in five.text
    assert stats.spread([]) is None


def test_no_verdict_from_noise() -> None:
    rng = random.Random(1)
    same_a = [1000 + rng.gauss(0, 80) for _ in range(10)]
    same_b = [1000 + rng.gauss(0, 80) for _ in range(10)]
    v = stats.speed_verdict(same_a, same_b, compile_time_s=1.0, how="test")
    assert v is not None and not v.resolved and v.low <= 1.0 <= v.high
    assert "within noise (±" in v.text and "pays back" not in v.text and "faster" not in v.text
    assert v.steps_to_resolve is None or v.steps_to_resolve > 10
    # eager twice as slow, the same spread: compiled faster, its interval above 1, pays back
    # after compile time / saved per step = 1 s / ~1 ms = ~1000 steps
    slow = [2 * x for x in same_a]
    w = stats.speed_verdict(slow, same_b, compile_time_s=1.0, how="test")
    assert w is not None and w.resolved and w.low > 1.0
    assert "faster" in w.text and "pays back after" in w.text
    # compiled slower, resolved: "does not pay"
    x = stats.speed_verdict(same_b, slow, compile_time_s=1.0, how="test")
    assert x is not None and x.resolved and x.high < 1.0 and "does not pay" in x.text


def test_a_break_is_weighed_against_the_steps_noise() -> None:
    step = stats.spread([10_000.0, 10_400.0, 9_600.0, 10_200.0, 9_800.0, 10_100.0, 9_900.0, 10_300.0, 9_700.0, 10_000.0])
    assert step is not None and 0.01 < step.noise < 0.05
    small = stats.spread([30.0, 31.0, 29.0, 30.0, 32.0, 28.0, 30.0, 31.0, 29.0, 30.0])  # 0.3 % of the step
    v, text = stats.break_verdict(small, step, 30.0, " in 0/0", 0.003)
    assert v is not None and not v.resolved and "within noise (±" in text and text.startswith("30 µs/step")
    assert "steps would resolve" in text and v.steps_to_resolve is not None and v.steps_to_resolve > 10
    big = stats.spread([5_000.0 + i for i in range(10)])  # half the step
    w, said = stats.break_verdict(big, step, 5_004.5, " in 0/0", 0.5)
    assert w is not None and w.resolved and said.startswith("the break costs 5.00 ms/step")
    # without per-step samples (an older recording): the mean, no verdict
    none, plain = stats.break_verdict(None, None, 42.0, " in 0/0", None)
    assert none is None and plain == "42 µs/step under the profiler: eager code in 0/0"


def test_a_saving_is_said_only_outside_the_noise() -> None:
    before = [2000.0 + i for i in range(10)]
    after = [1000.0 + i for i in range(10)]
    v = stats.saving_verdict(before, after)
    assert v is not None and v.resolved and v.text.startswith("saves 1.00 ms/step")
    u = stats.saving_verdict(before, list(reversed(before)))
    assert u is not None and not u.resolved and u.text.startswith("within noise")
