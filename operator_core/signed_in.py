"""The person a sign-in-only view serves, typed as what Django guarantees there.

`HttpRequest.user` is typed for any request (`User | AnonymousUser`). Behind
`login_required`, DOT's `LoginRequiredMixin` or the admin site, only a signed-in
person reaches the view, so this narrows the type without a check at run time.
"""

from typing import cast

from django.contrib.auth.models import User
from django.http import HttpRequest


def signed_in_person(request: HttpRequest) -> User:
    """`request.user` in a view that only a signed-in person reaches."""
    return cast(User, request.user)
