"""The figures of an organization's usage page and of its CSV export.

docs/managing-connections.md#usage-of-an-organization says what they show.

Every figure is counted from the audit trail by `audit.usage.usage_counts`,
per day in the organization's display time zone; this module names the keys
(the client's name as consented, the person's email) and shapes the tables and
charts. The span is clamped to what the trail keeps (`audit_retention_days`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from django.utils.formats import date_format

from agent_auth.connections import HEADLESS_CLIENT_NAME
from agent_auth.services import HEADLESS_CLIENT_ID
from audit.failures import RefusalKind
from audit.models import UsageFigure
from audit.selectors import client_names
from audit.usage import UsageCounts, usage_counts
from connections.charts import Chart, daily_chart, ranking_chart
from operator_core.conf import operator_settings
from operator_core.display_text import display_safe
from operator_core.errors import InvalidArguments
from organizations.models import Organization
from organizations.selectors import display_zone, emails_of_people

SPANS = (30, 90)
DEFAULT_DAYS = 30
MAX_DAYS = 90
# Keys shown one by one, in the tables and the charts, before the rest is summed in "Other".
TABLE_SERIES = 8
OTHER = "Other"
DAY_FORMAT = "j M Y"

REFUSAL_LABELS: dict[str, str] = {
    RefusalKind.FORBIDDEN: "Forbidden (no admin or member role)",
    RefusalKind.LIMITED: "Rate-limited or concurrency-limited",
    RefusalKind.CLIENT_POLICY: "Blocked by the client policy",
    RefusalKind.TOKEN_REFUSED: "Token refused",
}
FIGURE_TITLES = {
    UsageFigure.TOOL: "Tool calls by tool",
    UsageFigure.CLIENT: "Tool calls by client",
    UsageFigure.PERSON: "Tool calls by person",
    UsageFigure.REFUSAL: "Refusals by reason",
}


def span_days(raw: str | None) -> int:
    """The `days` parameter: 30 when absent, clamped to 1..90 and the retention; `InvalidArguments` if no number."""
    if raw is None or raw == "":
        days = DEFAULT_DAYS
    elif raw.isascii() and raw.isdigit() and len(raw) <= 6:
        days = int(raw)
    else:
        raise InvalidArguments("days must be a whole number of days, such as 30 or 90.", field="days")
    return max(1, min(days, MAX_DAYS, operator_settings().audit_retention_days))


@dataclass(frozen=True)
class Series:
    key: str
    label: str
    total: int
    per_day: list[int]


@dataclass(frozen=True)
class Figure:
    figure: str
    title: str
    series: list[Series]
    # series past TABLE_SERIES, summed per day; None when there are none
    other: Series | None
    totals: list[int]
    # (the day as the page writes it, [each shown series, then Other when there is one, then the total])
    rows: list[tuple[str, list[int]]]
    chart: Chart
    ranking: Chart

    @property
    def total(self) -> int:
        return sum(self.totals)


@dataclass(frozen=True)
class UsagePage:
    organization: Organization
    days: int
    zone: str
    dates: list[date]
    figures: list[Figure]
    retention_days: int


@dataclass(frozen=True)
class CsvRow:
    figure: str
    day: date
    key: str
    name: str
    count: int


def _labels(counts: UsageCounts) -> dict[tuple[str, str], str]:
    keys = {(str(figure), key) for _, figure, key in counts}
    names = client_names(key for figure, key in keys if figure == UsageFigure.CLIENT)
    emails = emails_of_people({int(key) for figure, key in keys if figure == UsageFigure.PERSON and key.isdigit()})
    labels: dict[tuple[str, str], str] = {}
    for figure, key in keys:
        if figure == UsageFigure.CLIENT:
            # A client chose its name: shown display-safe, as on every other page (operator_core/display_text.py).
            label = HEADLESS_CLIENT_NAME if key == HEADLESS_CLIENT_ID else display_safe(names.get(key, key))
        elif figure == UsageFigure.PERSON:
            label = emails.get(int(key), f"a deleted person ({key})") if key.isdigit() else "nobody"
        elif figure == UsageFigure.REFUSAL:
            label = REFUSAL_LABELS.get(key, key)
        else:
            label = key
        labels[figure, key] = label
    return labels


def _figure(
    figure: str, counts: UsageCounts, dates: list[date], labels: dict[tuple[str, str], str], *, day_labels: list[str]
) -> Figure:
    index = {day: position for position, day in enumerate(dates)}
    per_key: dict[str, list[int]] = {}
    for (day, kind, key), count in counts.items():
        if kind == figure and day in index:
            per_key.setdefault(key, [0] * len(dates))[index[day]] += count
    series = sorted(
        (
            Series(key=key, label=labels[figure, key], total=sum(values), per_day=values)
            for key, values in per_key.items()
        ),
        key=lambda item: (-item.total, item.label, item.key),
    )
    shown, rest = series[:TABLE_SERIES], series[TABLE_SERIES:]
    other = None
    if rest:
        summed = [sum(values) for values in zip(*(item.per_day for item in rest), strict=True)]
        other = Series(key=OTHER, label=OTHER, total=sum(summed), per_day=summed)
    totals = [sum(values) for values in zip(*(item.per_day for item in series), strict=True)] or [0] * len(dates)
    columns = [*shown, *([other] if other else [])]
    return Figure(
        figure=figure,
        title=FIGURE_TITLES[UsageFigure(figure)],
        series=shown,
        other=other,
        totals=totals,
        rows=[(label, [*(item.per_day[at] for item in columns), totals[at]]) for at, label in enumerate(day_labels)],
        chart=daily_chart(totals, [day.isoformat() for day in dates]),
        ranking=ranking_chart([(item.label, item.total) for item in columns]),
    )


def _span(organization: Organization, *, days: int, now: datetime) -> tuple[ZoneInfo, list[date], UsageCounts]:
    zone = display_zone(organization)
    today = now.astimezone(zone).date()
    dates = [today - timedelta(days=offset) for offset in range(days - 1, -1, -1)]
    return zone, dates, usage_counts(organization.pk, zone=zone, first_day=dates[0], now=now)


def usage_of_organization(organization: Organization, *, days: int, now: datetime) -> UsagePage:
    """The page's figures over the last `days` days, today included, in the organization's time zone."""
    zone, dates, counts = _span(organization, days=days, now=now)
    labels = _labels(counts)
    day_labels = [date_format(day, DAY_FORMAT) for day in dates]
    figures = [_figure(str(figure), counts, dates, labels, day_labels=day_labels) for figure in FIGURE_TITLES]
    return UsagePage(
        organization=organization,
        days=days,
        zone=str(zone.key),
        dates=dates,
        figures=figures,
        retention_days=operator_settings().audit_retention_days,
    )


def usage_csv_rows(organization: Organization, *, days: int, now: datetime) -> list[CsvRow]:
    """Every count of the page, one row per figure, day and key (none folded into "Other"), by figure then day."""
    _, dates, counts = _span(organization, days=days, now=now)
    labels = _labels(counts)
    order = {str(figure): position for position, figure in enumerate(FIGURE_TITLES)}
    rows = [
        CsvRow(figure=figure, day=day, key=key, name=labels[figure, key], count=count)
        for (day, figure, key), count in counts.items()
        if figure in order and day >= dates[0] and count
    ]
    return sorted(rows, key=lambda row: (order[row.figure], row.day, row.name, row.key))
