"""Filters that write the usage page's repeated markup: chart bars and table cells.

A 90-day figure is about a thousand cells and a hundred bars; written by the
template language one variable at a time, with number localization, they cost
most of the page's time. Here each row or chart is one call. Numbers are
formatted as numbers (`:d`, `:g`: digits, a sign, a point, an exponent; never
markup, never localized, so an SVG coordinate is always a valid one), and
every label is escaped.
"""

from __future__ import annotations

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from connections.charts import Chart

register = template.Library()

# Text sits this far below the top of its row's bar.
_LABEL_DROP = 12
_LABEL_CHARACTERS = 34


@register.filter
def cells(values: list[int]) -> SafeString:
    """`<td>` elements, one per value."""
    return mark_safe("".join(f"<td>{value:d}</td>" for value in values))  # noqa: S308 - integers only


@register.filter
def daily_bars(chart: Chart) -> SafeString:
    """The `<rect>` of each day, with its date and count as the bar's title."""
    return mark_safe(  # noqa: S308 - numbers, and the escaped label
        "".join(
            f'<rect class="bar" x="{bar.x:g}" y="{bar.y:g}" width="{bar.width:g}" height="{bar.height:g}">'
            f"<title>{escape(bar.label)}: {bar.value:d}</title></rect>"
            for bar in chart.bars
        )
    )


@register.filter
def ranking_bars(chart: Chart) -> SafeString:
    """Each item's label, then its `<rect>`, with its full name and count as the bar's title."""
    return mark_safe(  # noqa: S308 - numbers, and the escaped labels
        "".join(
            f'<text class="label" x="0" y="{bar.y + _LABEL_DROP:g}">{escape(_shortened(bar.label))}</text>'
            f'<rect class="bar" x="{bar.x:g}" y="{bar.y:g}" width="{bar.width:g}" height="{bar.height:g}">'
            f"<title>{escape(bar.label)}: {bar.value:d}</title></rect>"
            for bar in chart.bars
        )
    )


def _shortened(label: str) -> str:
    return label if len(label) <= _LABEL_CHARACTERS else label[: _LABEL_CHARACTERS - 1] + "…"
