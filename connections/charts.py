"""The geometry of the usage page's charts, drawn as SVG by the template.

Only numbers leave here: the template places `<rect>` elements whose look
comes from the one stylesheet, so the page needs no script and no inline
style under its Content-Security-Policy (operator_core/page_security.py).
Each chart is drawn beside a table of the same figures, which is what a
screen reader reads.
"""

from __future__ import annotations

from dataclasses import dataclass

WIDTH = 720
DAILY_HEIGHT = 160
ROW_HEIGHT = 22
LABEL_WIDTH = 240


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    label: str
    value: int


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    maximum: int
    bars: list[Bar]


def daily_chart(values: list[int], labels: list[str]) -> Chart:
    """One vertical bar per day, scaled to the busiest day; an empty day is a gap."""
    maximum = max(values, default=0)
    step = WIDTH / max(len(values), 1)
    bars = [
        Bar(
            x=round(index * step + step * 0.1, 2),
            y=round(DAILY_HEIGHT - _scaled(value, maximum, DAILY_HEIGHT), 2),
            width=round(step * 0.8, 2),
            height=round(_scaled(value, maximum, DAILY_HEIGHT), 2),
            label=label,
            value=value,
        )
        for index, (value, label) in enumerate(zip(values, labels, strict=True))
    ]
    return Chart(width=WIDTH, height=DAILY_HEIGHT, maximum=maximum, bars=bars)


def ranking_chart(items: list[tuple[str, int]]) -> Chart:
    """One horizontal bar per item, largest first as given, scaled to the first; labels drawn left of the bars."""
    maximum = max((value for _, value in items), default=0)
    span = WIDTH - LABEL_WIDTH
    bars = [
        Bar(
            x=LABEL_WIDTH,
            y=index * ROW_HEIGHT + 3,
            width=round(_scaled(value, maximum, span), 2),
            height=ROW_HEIGHT - 6,
            label=label,
            value=value,
        )
        for index, (label, value) in enumerate(items)
    ]
    return Chart(width=WIDTH, height=max(len(items), 1) * ROW_HEIGHT, maximum=maximum, bars=bars)


def _scaled(value: int, maximum: int, length: float) -> float:
    return length * value / maximum if maximum else 0.0
