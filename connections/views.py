"""The connections pages: a person's own connections, and an organization's for its admins.

Both list connections and offer no control to end one: the service's contract
leaves that to the client and to the person's role (docs/managing-connections.md).
The usage page and its CSV are for the same admins (docs/managing-connections.md#usage-of-an-organization);
a `days` that is no number is answered with a 400 page, one out of range is clamped.
The one write is the organization's client policy, a plain form (no
JavaScript), CSRF-checked and answered with a redirect back to the page. The
organization pages read the person's role on every request: an admin sees
them, any other role gets 403, and someone with no role there gets the 404
page, as for an organization that does not exist.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe

from connections.forms import MODE_LISTED, ClientPolicyForm
from connections.health import failures_in_organization, failures_of_person
from connections.selectors import client_choices, connections_in_organization, connections_of_person
from connections.usage import SPANS, span_days, usage_csv_rows, usage_of_organization
from oauth.client_policy import normalise_metadata_hosts, policy_summary, set_client_policy
from oauth.models import Application
from operator_core.csv_cells import SafeCsvWriter
from operator_core.errors import Forbidden, InvalidArguments, NotFound
from operator_core.signed_in import signed_in_person
from organizations.admin_access import organization_administered_by
from organizations.models import Organization
from organizations.selectors import display_zone

OrganizationView = Callable[..., HttpResponse]


# --- a person's own connections ----------------------------------------------------------


@never_cache
@login_required
@require_safe
def my_connections(request: HttpRequest) -> HttpResponse:
    person = signed_in_person(request)
    failures = failures_of_person(person)
    rows = connections_of_person(person, failures=failures)
    return render(request, "connections/mine.html", {"rows": rows, "failures": failures})


# --- an organization's connections -------------------------------------------------------


def organization_admin_page(view: OrganizationView) -> OrganizationView:
    """Run `view(request, organization)` for an admin of the organization `slug`; 404 or 403 otherwise."""

    @wraps(view)
    def page(request: HttpRequest, slug: str) -> HttpResponse:
        try:
            organization = organization_administered_by(signed_in_person(request), slug=slug)
        except NotFound:
            raise Http404("no such organization") from None
        except Forbidden as error:
            return render(request, "connections/forbidden.html", {"message": error.message}, status=403)
        return view(request, organization)

    return never_cache(login_required(page))


def _organization_page(
    request: HttpRequest, organization: Organization, *, form: ClientPolicyForm | None = None, status: int = 200
) -> HttpResponse:
    failures = failures_in_organization(organization)
    rows = connections_in_organization(organization, failures=failures)
    choices = client_choices(organization, rows)
    policy = policy_summary(organization.pk)
    context = {
        "organization": organization,
        "rows": rows,
        "failures": failures,
        "zone": display_zone(organization),
        "choices": choices,
        "policy": policy,
        "form": form,
        "hosts_text": form.data.get("hosts", "") if form is not None else "\n".join(policy.metadata_hosts),
    }
    return render(request, "connections/organization.html", context, status=status)


@require_safe
@organization_admin_page
def organization_connections(request: HttpRequest, organization: Organization) -> HttpResponse:
    return _organization_page(request, organization)


@require_POST
@organization_admin_page
def change_client_policy(request: HttpRequest, organization: Organization) -> HttpResponse:
    choices = client_choices(organization, connections_in_organization(organization))
    offered = {choice.application.client_id: choice.application for choice in choices}
    form = ClientPolicyForm(request.POST, client_ids=list(offered))
    if not form.is_valid():
        return _organization_page(request, organization, form=form, status=400)
    try:
        hosts = normalise_metadata_hosts(form.cleaned_data["hosts"].splitlines())
    except InvalidArguments as error:
        form.add_error("hosts", error.message)
        return _organization_page(request, organization, form=form, status=400)
    applications: list[Application] = [offered[client_id] for client_id in form.cleaned_data["clients"]]
    set_client_policy(
        organization=organization,
        actor=signed_in_person(request),
        only_listed=form.cleaned_data["mode"] == MODE_LISTED,
        dynamic_clients=form.cleaned_data["dynamic_clients"],
        metadata_hosts=hosts,
        applications=applications,
    )
    messages.success(
        request, "Client policy saved. Connections it no longer admits end at their next refresh, for good."
    )
    return redirect("connections:organization", slug=organization.slug)


# --- an organization's usage -------------------------------------------------------------

CSV_COLUMNS = ("figure", "date", "key", "name", "count")


def _bad_request(request: HttpRequest, error: InvalidArguments) -> HttpResponse:
    return render(request, "connections/bad_request.html", {"message": error.message}, status=400)


@require_safe
@organization_admin_page
def organization_usage(request: HttpRequest, organization: Organization) -> HttpResponse:
    try:
        days = span_days(request.GET.get("days"))
    except InvalidArguments as error:
        return _bad_request(request, error)
    page = usage_of_organization(organization, days=days, now=timezone.now())
    return render(request, "connections/usage.html", {"page": page, "organization": organization, "spans": SPANS})


@require_safe
@organization_admin_page
def organization_usage_csv(request: HttpRequest, organization: Organization) -> HttpResponse:
    try:
        days = span_days(request.GET.get("days"))
    except InvalidArguments as error:
        return _bad_request(request, error)
    filename = f"{organization.slug}-usage-{days}-days.csv"
    response = HttpResponse(
        content_type="text/csv; charset=utf-8", headers={"Content-Disposition": f'attachment; filename="{filename}"'}
    )
    # An HttpResponse is a writable text stream, though not a TextIOBase in the stubs.
    writer = SafeCsvWriter(response, fieldnames=CSV_COLUMNS)  # type: ignore[arg-type]
    writer.writeheader()
    for row in usage_csv_rows(organization, days=days, now=timezone.now()):
        writer.writerow(
            {"figure": row.figure, "date": row.day.isoformat(), "key": row.key, "name": row.name, "count": row.count}
        )
    return response
