"""The connections pages: a person's own connections, and an organization's for its admins.

Both list connections and offer no control to end one: the service's contract
leaves that to the client and to the person's role (docs/managing-connections.md).
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
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe

from connections.forms import MODE_LISTED, ClientPolicyForm
from connections.selectors import client_choices, connections_in_organization, connections_of_person
from oauth.client_policy import normalise_metadata_hosts, policy_summary, set_client_policy
from oauth.models import Application
from operator_core.errors import Forbidden, InvalidArguments, NotFound
from operator_core.signed_in import signed_in_person
from organizations.admin_access import organization_administered_by
from organizations.models import Organization

OrganizationView = Callable[..., HttpResponse]


# --- a person's own connections ----------------------------------------------------------


@never_cache
@login_required
@require_safe
def my_connections(request: HttpRequest) -> HttpResponse:
    return render(request, "connections/mine.html", {"rows": connections_of_person(signed_in_person(request))})


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
    rows = connections_in_organization(organization)
    choices = client_choices(organization, rows)
    policy = policy_summary(organization.pk)
    context = {
        "organization": organization,
        "rows": rows,
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
