"""The consent page's answer to a client the chosen organization's policy does not admit.

A page, not a redirect to the client: the person learns which policy refused
the client and whom to ask (docs/managing-connections.md#the-client-policy);
its "Return to" link tells the client, with `access_denied`, when the person follows it.
The refusal is written to the audit trail as a denied authorization.
"""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from oauthlib.oauth2.rfc6749.errors import AccessDeniedError

from audit.models import AuditAction
from audit.services import record_event
from oauth.client_policy import client_admitted, policy_summary
from oauth.models import Application
from organizations.models import Organization

REASON_CLIENT_POLICY = "client_policy"


def refusal_outside_client_policy(
    request: HttpRequest, *, client_id: str, organization: Organization, return_url: str
) -> HttpResponse | None:
    """HTTP 403 naming the organization's policy when it does not admit `client_id`; None when it does.

    `return_url` is the client's registered redirect URI with the refusal (`oauth.views._denial_url`).
    """
    application = Application.objects.filter(client_id=client_id).first()
    if application is None or client_admitted(application, organization_id=organization.pk):
        return None
    record_event(
        AuditAction.AUTHORIZATION,
        outcome=AccessDeniedError.error,
        person_id=request.user.pk,
        organization_id=organization.pk,
        client_id=application.client_id,
        client_name=application.name,
        detail={"reason": REASON_CLIENT_POLICY},
    )
    context = {
        "application": application,
        "organization": organization,
        "policy": policy_summary(organization.pk),
        "return_url": return_url,
    }
    return render(request, "oauth/client_refused.html", context, status=403)
