"""How sure a timing is: each figure's spread over the steps it was measured in, and the
verdicts ``cost`` gives only when their interval excludes no-change (issue 57).

- ``spread(samples)``: min, quartiles, median and an exact order-statistic confidence
  interval of the median (distribution-free: for n steps, the k-th smallest and k-th
  largest with k the largest that keeps ``P(k <= Binomial(n, 1/2) <= n-k) >= 95 %``; under
  6 steps no such k exists and the interval is [min, max] at the coverage n steps give).
- ``ratio(eager, compiled)``: the ratio of the two arms' medians with a percentile bootstrap
  interval (each arm resampled on its own, a fixed seed: the same recording always gives
  the same interval); ``difference(before, after)`` the same for a difference.
- The verdicts: ``speed_verdict`` (compiled against eager), ``break_verdict`` (what one
  break costs against the step's own noise), ``saving_verdict`` (a fix's before → after).
  Each says its claim only when the interval excludes no-change; otherwise "within noise
  (±Y %)" and about how many steps would resolve a difference of the size seen (an
  interval narrows as 1/√n).

Nothing here reads a run: the callers hand in samples (µs).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from statistics import median

from dyn_inspect.inspector.units import time_text

CONFIDENCE = 0.95
BOOTSTRAP = 2000
_SEED = 57
_MAX_STEPS = 1_000_000  # beyond this "more steps" is no answer: the difference is nil


@dataclass(frozen=True)
class Spread:
    n: int
    mean: float
    min: float
    q1: float
    median: float
    q3: float
    max: float
    low: float  # the median's confidence interval
    high: float
    confidence: float  # its coverage (below CONFIDENCE only for fewer than 6 steps)

    @property
    def noise(self) -> float:
        """Half the interval's width, as a share of the median."""
        return (self.high - self.low) / 2 / self.median if self.median > 0 else 0.0

    @property
    def text(self) -> str:
        """E.g. "median 1.63 ms (IQR 1.43–1.56 ms; 95% CI 1.40–1.68 ms; 10 steps)"; one step
        has no spread and no interval, and says so."""
        if self.n == 1:
            return f"{time_text(self.median)} (1 step: no spread, no interval)"
        return (
            f"median {time_text(self.median)} (IQR {time_text(self.q1)}–{time_text(self.q3)}; "
            f"{self.confidence:.0%} CI {time_text(self.low)}–{time_text(self.high)}; {self.n} step{'s' if self.n != 1 else ''})"
        )


def _quantile(xs: list[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default)."""
    if len(xs) == 1:
        return xs[0]
    pos = q * (len(xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _median_rank(n: int) -> tuple[int, float]:
    """The largest k (1-based) with P(k <= B(n, 1/2) <= n - k) >= CONFIDENCE, and that
    coverage; (1, its coverage) when even [min, max] falls short."""
    best = (1, 1 - 2 * 0.5**n)
    for k in range(1, n // 2 + 1):
        tail = sum(math.comb(n, i) for i in range(k)) / 2**n  # P(B < k)
        coverage = 1 - 2 * tail
        if coverage >= CONFIDENCE:
            best = (k, coverage)
        else:
            break
    return best


def spread(samples: list[float] | tuple[float, ...]) -> Spread | None:
    xs = sorted(float(x) for x in samples)
    if not xs:
        return None
    n = len(xs)
    k, coverage = _median_rank(n)
    return Spread(
        n=n,
        mean=sum(xs) / n,
        min=xs[0],
        q1=_quantile(xs, 0.25),
        median=float(median(xs)),
        q3=_quantile(xs, 0.75),
        max=xs[-1],
        low=xs[k - 1],
        high=xs[n - k],
        confidence=coverage if n > 1 else 0.0,
    )


@dataclass(frozen=True)
class Interval:
    value: float
    low: float
    high: float
    confidence: float


def _bootstrap(a: list[float], b: list[float], stat: object) -> Interval:
    f = stat  # (median of a, median of b) -> value
    rng = random.Random(_SEED)
    value = f(median(a), median(b))  # type: ignore[operator]
    got = sorted(
        f(median(rng.choices(a, k=len(a))), median(rng.choices(b, k=len(b))))  # type: ignore[operator]
        for _ in range(BOOTSTRAP)
    )
    tail = (1 - CONFIDENCE) / 2
    return Interval(float(value), _quantile(got, tail), _quantile(got, 1 - tail), CONFIDENCE)


def ratio(eager: list[float], compiled: list[float]) -> Interval | None:
    """median(eager) / median(compiled): above 1, compiled is faster."""
    if len(eager) < 2 or len(compiled) < 2 or min(compiled) <= 0:
        return None
    return _bootstrap(list(eager), list(compiled), lambda e, c: e / c if c else math.inf)


def difference(before: list[float], after: list[float]) -> Interval | None:
    """median(before) - median(after): above 0, ``after`` is faster."""
    if len(before) < 2 or len(after) < 2:
        return None
    return _bootstrap(list(before), list(after), lambda x, y: x - y)


def steps_to_resolve(n: int, noise: float, effect: float) -> int | None:
    """About how many steps would make an interval of half-width ``noise`` (at ``n`` steps)
    narrower than ``effect`` (both shares): the width falls as 1/√n. None: the effect is
    nil (no number of steps would show it)."""
    if effect <= 0 or noise <= 0:
        return None
    steps = math.ceil(n * (noise / effect) ** 2 * 1.1)
    return steps if steps <= _MAX_STEPS else None


def noise_text(noise: float) -> str:
    """ "±13%"; past ±100 % the figure says nothing more than that."""
    return f"±{noise:.0%}" if noise <= 1 else "more than ±100%"


def _more_steps(steps: int | None, per: str = "") -> str:
    if steps is None:
        return "no difference was found: four times the steps would halve the noise"
    return f"about {steps:,} steps{per} would resolve a difference this size"


@dataclass(frozen=True)
class Verdict:
    """A claim and how sure it is: ``resolved`` when the interval excludes no-change."""

    resolved: bool
    value: float  # the ratio, or µs
    low: float
    high: float
    confidence: float
    noise: float  # the interval's half-width, as a share
    steps_to_resolve: int | None  # (when not resolved) about how many steps would resolve it
    text: str


def speed_verdict(eager: list[float], compiled: list[float], compile_time_s: float, how: str) -> Verdict | None:
    """Compiled against eager: "compiled 1.82× faster (95% CI 1.61–2.04×) ...; compiling took
    1.0 s: it pays back after 95 steps (80–120)" only when the ratio's interval excludes 1."""
    r = ratio(eager, compiled)
    if r is None:
        return None
    ce, cc = median(eager), median(compiled)
    n = min(len(eager), len(compiled))
    noise = (r.high - r.low) / 2 / r.value if r.value > 0 else 0.0
    ci = f"{r.confidence:.0%} CI {r.low:.2f}–{r.high:.2f}×"
    head = f"compiled {time_text(cc)}/step, eager {time_text(ce)}/step (medians, {how})"
    if r.low > 1.0:
        saved = difference(eager, compiled)
        assert saved is not None
        pays = math.ceil(compile_time_s * 1e6 / saved.value) if saved.value > 0 else None
        slow = math.ceil(compile_time_s * 1e6 / saved.low) if saved.low > 0 else None
        fast = math.ceil(compile_time_s * 1e6 / saved.high) if saved.high > 0 else None
        span = f" ({fast:,}–{slow:,})" if fast is not None and slow is not None and fast != slow else ""
        back = f"it pays back after {pays:,} steps{span}" if pays is not None else "it may never pay back"
        text = f"{head}: compiled {r.value:.2f}× faster ({ci}); compiling took {compile_time_s:.1f} s and saves {time_text(saved.value)}/step: {back}"
        return Verdict(True, r.value, r.low, r.high, r.confidence, noise, None, text)
    if r.high < 1.0:
        text = f"{head}: compiled {1 / r.value:.2f}× slower ({ci}): compiling does not pay here"
        return Verdict(True, r.value, r.low, r.high, r.confidence, noise, None, text)
    steps = steps_to_resolve(n, noise, abs(r.value - 1.0))
    text = (
        f"{head}: within noise ({noise_text(noise)}): speedup {r.value:.2f}× ({ci}) over {len(compiled)} + {len(eager)} steps; "
        + _more_steps(steps, " per arm")
    )
    return Verdict(False, r.value, r.low, r.high, r.confidence, noise, steps, text)


def break_verdict(costs: Spread | None, step: Spread | None, mean_us: float, where: str, share: float | None) -> tuple[Verdict | None, str]:
    """What one break costs per step, against the step's own noise: a fix saving less than
    the step time's interval would not show. ``mean_us``: the window's figure (the mean).
    Returns the verdict (None without per-step samples) and the sentence every face shows."""
    share_text = f" ({share:.1%} of the step)" if share is not None else ""
    if costs is None or step is None or step.n < 2:
        return None, f"{time_text(mean_us)}/step under the profiler{share_text}: eager code{where}"
    noise = step.noise
    effect = costs.median / step.median if step.median > 0 else 0.0
    ci = f"{costs.confidence:.0%} CI {time_text(costs.low)}–{time_text(costs.high)}"
    if costs.low > 0 and effect > noise:
        text = f"the break costs {time_text(costs.median)}/step under the profiler{share_text}, {ci}: eager code{where}"
        return Verdict(True, costs.median, costs.low, costs.high, costs.confidence, noise, None, text), text
    steps = steps_to_resolve(step.n, noise, effect)
    text = (
        f"{time_text(costs.median)}/step under the profiler{share_text}: within noise ({noise_text(noise)} of the step), "
        f"{ci}: eager code{where}; " + _more_steps(steps)
    )
    return Verdict(False, costs.median, costs.low, costs.high, costs.confidence, noise, steps, text), text


def saving_verdict(before: list[float], after: list[float]) -> Verdict | None:
    """A fix's step before → after (two runs): "saves 1.2 ms/step (95% CI 0.9–1.5 ms)" only
    when the difference's interval excludes 0."""
    d = difference(before, after)
    if d is None:
        return None
    base = median(before)
    noise = (d.high - d.low) / 2 / base if base > 0 else 0.0
    lo, hi = sorted((abs(d.low), abs(d.high)))
    ci = f"{d.confidence:.0%} CI {time_text(lo)}–{time_text(hi)}"
    if d.low > 0:
        return Verdict(True, d.value, d.low, d.high, d.confidence, noise, None, f"saves {time_text(d.value)}/step ({ci})")
    if d.high < 0:
        return Verdict(True, d.value, d.low, d.high, d.confidence, noise, None, f"costs {time_text(-d.value)}/step more ({ci})")
    n = min(len(before), len(after))
    steps = steps_to_resolve(n, noise, abs(d.value) / base if base > 0 else 0.0)
    return Verdict(False, d.value, d.low, d.high, d.confidence, noise, steps, f"within noise ({noise_text(noise)}): " + _more_steps(steps))
