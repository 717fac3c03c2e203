"""The authorization server's and the headless path's endpoints are spans with their outcome, never a secret."""

from django.test import Client
from opentelemetry.sdk.trace import ReadableSpan

from audit.models import AuditAction, AuditEvent
from oauth.refresh_grace import EVENT_GRACE_REPLAY
from organizations.models import Role
from tests.agent_auth.support import HeadlessTestCase, wrong_code
from tests.factories import make_membership, make_user
from tests.oauth.support import REGISTER, REVOKE, OAuthTestCase
from tests.telemetry.support import every_text_of, server_spans, trace_id_of, trace_in_memory

TOKEN_SPAN = "POST /api/auth/oauth2/token"


def outcomes_of(spans: list[ReadableSpan]) -> list[tuple[str, object, object]]:
    """Each span's name, outcome and error type, in order."""
    return [(span.name, span.attributes["operator.outcome"], span.attributes.get("error.type")) for span in spans]


class OAuthEndpointSpanTests(OAuthTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.client_id = self.register()["client_id"]
        self.user = make_user()
        make_membership(user=self.user, role=Role.MEMBER)
        self.sign_in(self.user)
        self.tokens = self.tokens_for(self.client_id)
        self.spans = trace_in_memory(self)
        # Each client builds its middleware chain on its first request: these trace.
        self.api = Client()
        self.browser = Client()
        self.sign_in(self.user)

    def span_named(self, name: str):
        (span,) = [span for span in server_spans(self.spans.get_finished_spans()) if span.name == name]
        return span

    def test_a_token_refresh_is_a_span_with_its_grant_and_outcome_and_no_token(self) -> None:
        response = self.refresh(self.client_id, self.tokens["refresh_token"])

        self.assertEqual(response.status_code, 200, response.content)
        span = self.span_named(TOKEN_SPAN)
        self.assertEqual(span.attributes["http.route"], "/api/auth/oauth2/token")
        self.assertEqual(span.attributes["operator.outcome"], "issued")
        self.assertEqual(span.attributes["operator.oauth.grant_type"], "refresh_token")
        self.assertEqual(span.attributes["http.response.status_code"], 200)
        self.assertNotIn("error.type", span.attributes)
        self.assertIsNone(span.parent)
        row = AuditEvent.objects.get(action=AuditAction.REFRESH)
        self.assertEqual(row.request_id, trace_id_of(span))
        self.assertEqual(response["X-Request-Id"], trace_id_of(span))
        text = every_text_of(self.spans.get_finished_spans())
        for secret in (self.tokens["refresh_token"], self.tokens["access_token"], response.json()["refresh_token"]):
            self.assertNotIn(secret, text)

    def test_a_refresh_replayed_in_the_grace_window_is_replayed(self) -> None:
        self.assertEqual(self.refresh(self.client_id, self.tokens["refresh_token"]).status_code, 200)
        self.spans.clear()

        replay = self.refresh(self.client_id, self.tokens["refresh_token"])

        self.assertEqual(replay.status_code, 200, replay.content)
        span = self.span_named(TOKEN_SPAN)
        self.assertEqual(span.attributes["operator.outcome"], "replayed")
        self.assertEqual(span.attributes["operator.oauth.event"], EVENT_GRACE_REPLAY)
        self.assertNotIn(self.tokens["refresh_token"], every_text_of(self.spans.get_finished_spans()))

    def test_a_refused_refresh_carries_the_oauth_error_code(self) -> None:
        response = self.refresh(self.client_id, "not-a-refresh-token-8e1c")

        self.assertEqual(response.status_code, 400)
        span = self.span_named(TOKEN_SPAN)
        self.assertEqual(span.attributes["operator.outcome"], "refused")
        self.assertEqual(span.attributes["error.type"], "invalid_grant")
        self.assertNotIn("not-a-refresh-token-8e1c", every_text_of(self.spans.get_finished_spans()))

    def test_a_consent_is_issued_and_a_denial_refused_with_access_denied(self) -> None:
        granted, _ = self.consent(self.client_id)
        denied, _ = self.consent(self.client_id, allow=False)

        self.assertEqual((granted.status_code, denied.status_code), (302, 302))
        posts = [span for span in self.spans.get_finished_spans() if span.name == "POST /api/auth/oauth2/authorize"]
        self.assertEqual([span.attributes["operator.outcome"] for span in posts], ["issued", "refused"])
        self.assertEqual(posts[1].attributes["error.type"], "access_denied")
        pages = [span for span in self.spans.get_finished_spans() if span.name == "GET /api/auth/oauth2/authorize"]
        self.assertEqual({span.attributes["operator.outcome"] for span in pages}, {"pending"})
        self.assertNotIn(granted["Location"].split("code=")[1].split("&")[0], every_text_of(posts))

    def test_registration_and_revocation_are_spans_with_their_outcome(self) -> None:
        registered = self.register(token_endpoint_auth_method="client_secret_basic")
        refused = self.api.post(REGISTER, data="[]", content_type="application/json")
        revoked = self.api.post(REVOKE, {"token": self.tokens["access_token"], "client_id": self.client_id})

        self.assertEqual((refused.status_code, revoked.status_code), (400, 200))
        spans = server_spans(self.spans.get_finished_spans())
        self.assertEqual(
            outcomes_of(spans),
            [
                ("POST /api/auth/oauth2/register", "issued", None),
                ("POST /api/auth/oauth2/register", "refused", "invalid_client_metadata"),
                ("POST /api/auth/oauth2/revoke", "revoked", None),
            ],
        )
        text = every_text_of(spans)
        for secret in (registered["client_secret"], self.tokens["access_token"]):
            self.assertNotIn(secret, text)


class HeadlessEndpointSpanTests(HeadlessTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.spans = trace_in_memory(self)

    def test_a_claim_is_started_refused_for_a_wrong_code_then_issued_with_no_code_or_token(self) -> None:
        membership = make_membership(role=Role.ADMIN)
        claim_token, code = self.start_and_read_code(membership.user.email)
        wrong = self.complete(claim_token, wrong_code(code))
        issued = self.complete(claim_token, code)

        self.assertEqual((wrong.status_code, issued.status_code), (400, 200), wrong.content)
        spans = [span for span in server_spans(self.spans.get_finished_spans()) if span.name.startswith("POST /api/")]
        self.assertEqual(
            outcomes_of(spans),
            [
                ("POST /api/agent/auth", "started", None),
                ("POST /api/agent/auth/claim/complete", "refused", "invalid_code"),
                ("POST /api/agent/auth/claim/complete", "issued", None),
            ],
        )
        text = every_text_of(self.spans.get_finished_spans())
        for secret in (claim_token, code, wrong_code(code), issued.json()["access_token"], membership.user.email):
            self.assertNotIn(secret, text)
