"""The simulator's statistics: running means with 95% confidence intervals, intervals on rates,
and percentiles of a distribution held as counts."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: The normal quantile for a two-sided 95% interval.
Z95 = 1.959963984540054


@dataclass(slots=True)
class Mean:
    """A running mean of numbers, with the normal-approximation 95% interval of the mean (the
    mean plus or minus 1.96 standard errors, from the sample variance)."""

    n: int = 0
    total: float = 0.0
    squares: float = 0.0

    def add(self, value: float) -> None:
        self.n += 1
        self.total += value
        self.squares += value * value

    def extend(self, values: Iterable[float]) -> None:
        for value in values:
            self.add(value)

    @property
    def mean(self) -> float | None:
        return self.total / self.n if self.n else None

    def ci95(self) -> tuple[float, float] | None:
        """None below two values, where no variance can be estimated."""
        if self.n < 2:
            return None
        mean = self.total / self.n
        variance = max(0.0, (self.squares - self.n * mean * mean) / (self.n - 1))
        half = Z95 * math.sqrt(variance / self.n)
        return (mean - half, mean + half)


def wilson(successes: int, trials: int) -> tuple[float, float] | None:
    """The Wilson score 95% interval of a rate: unlike mean plus or minus 1.96 standard errors it
    stays inside 0 to 1 and is not empty when a rate is 0 or 1."""
    if trials <= 0:
        return None
    if not 0 <= successes <= trials:
        raise ValueError(f"{successes} successes in {trials} trials")
    p = successes / trials
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = Z95 * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return (low, high)


def percentile(counts: Mapping[int, int], q: float) -> int | None:
    """The smallest value with at least `q` (0 to 1) of the counted values at or below it."""
    total = sum(counts.values())
    if total == 0:
        return None
    need = q * total
    seen = 0
    for value in sorted(counts):
        seen += counts[value]
        if seen >= need and seen > 0:
            return value
    return max(counts)


def rounded(interval: tuple[float, float] | None, places: int = 4) -> list[float] | None:
    """An interval as a two-number list for JSON, or None."""
    if interval is None:
        return None
    return [round(interval[0], places), round(interval[1], places)]
