"""Access tokens for operator-endpoint tests, minted by the real signing code."""

from oauth.tokens import issue_access_token
from operator_core.scopes import SCOPE_OPERATOR_READ
from organizations.models import Membership

TEST_CLIENT_ID = "test-client"


def token_for(
    membership: Membership,
    *,
    scopes: tuple[str, ...] = (SCOPE_OPERATOR_READ,),
    expires_in: int = 3600,
) -> str:
    """A token bound to the membership's person and organization, as the token endpoint mints it."""
    return issue_access_token(
        user_id=membership.user.pk,
        organization_id=str(membership.organization_id),
        client_id=TEST_CLIENT_ID,
        scopes=scopes,
        expires_in=expires_in,
    )
