"""The token endpoint's statements, pinned: each token a single INSERT, never completed by an UPDATE.

A change that adds a statement to a code exchange or a refresh fails here; the
counts include the savepoints of the endpoint's transaction.
"""

import re

from django.db import connection
from django.test.utils import CaptureQueriesContext

from organizations.models import Role
from tests.factories import make_membership
from tests.oauth.support import OAuthTestCase

CODE_EXCHANGE_STATEMENTS = 22
REFRESH_STATEMENTS = 28
TOKEN_TABLE_WRITE = re.compile(r'^(INSERT INTO|UPDATE) "(oauth_accesstoken|oauth_refreshtoken)"')


class TokenEndpointQueryTests(OAuthTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.client_id = self.register()["client_id"]
        membership = make_membership(role=Role.MEMBER)
        self.sign_in(membership.user)

    def token_table_writes(self, queries: CaptureQueriesContext) -> list[str]:
        found = (TOKEN_TABLE_WRITE.match(query["sql"]) for query in queries.captured_queries)
        return [f"{match[1]} {match[2]}" for match in found if match]

    def test_a_code_exchange_inserts_each_token_once(self) -> None:
        authorization = self.authorize(self.client_id)

        with CaptureQueriesContext(connection) as queries:
            response = self.exchange(self.client_id, authorization)

        self.assertEqual(response.status_code, 200, response.content)
        self.assertEqual(
            self.token_table_writes(queries), ["INSERT INTO oauth_accesstoken", "INSERT INTO oauth_refreshtoken"]
        )
        self.assertEqual(len(queries), CODE_EXCHANGE_STATEMENTS, [query["sql"][:80] for query in queries])

    def test_a_refresh_inserts_each_new_token_once(self) -> None:
        tokens = self.tokens_for(self.client_id)

        with CaptureQueriesContext(connection) as queries:
            response = self.refresh(self.client_id, tokens["refresh_token"])

        self.assertEqual(response.status_code, 200, response.content)
        # DOT's rotation: the rotated token loses its access token and is marked revoked; then the new pair.
        self.assertEqual(
            self.token_table_writes(queries),
            [
                "UPDATE oauth_refreshtoken",
                "UPDATE oauth_refreshtoken",
                "INSERT INTO oauth_accesstoken",
                "INSERT INTO oauth_refreshtoken",
            ],
        )
        self.assertEqual(len(queries), REFRESH_STATEMENTS, [query["sql"][:80] for query in queries])
