"""How the reports round what they measured: microseconds to three decimals (a nanosecond),
so that two runs of one command print the same JSON for the same figures."""

from __future__ import annotations


def us(value: float) -> float:
    """Microseconds, rounded to the nanosecond."""
    return round(value, 3)
