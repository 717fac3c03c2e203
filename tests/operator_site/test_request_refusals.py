"""A body declared over 1 MiB is refused unread, and a form with too many fields is a 4xx, on every path.

The attacks (issue 30, items 8 and 9): a client declares 20 MB and sends
slowly, holding a worker while the app reads (the token and registration
endpoints answered a 500); a normal-sized form with 1,001 fields made the
token endpoint answer a 500 (`TooManyFieldsSent`). Each answer now comes in
the path's own format.
"""

import json
from typing import Any

from django.test import Client, TestCase

from tests.factories import make_user
from tests.mcp_requests import DOCS_PATH, envelope, routing_headers
from tests.oauth.support import REGISTER, REVOKE, TOKEN

SIGN_IN = "/api/auth/sign-in"
HEADLESS_START = "/api/agent/auth"
ADMIN_SIGN_IN = "/admin/login/"
DECLARED = str(20 * 1024 * 1024)
FORM = "application/x-www-form-urlencoded"
MIB = 1024 * 1024


class NeverRead:
    """A request body that fails the test if anything reads it."""

    def read(self, *args: Any) -> bytes:
        raise AssertionError("the body of a request declared too large was read")

    readline = read


def post_declaring(client: Client, path: str, *, content_type: str, **headers: str) -> Any:
    return client.generic(
        "POST",
        path,
        headers=headers,
        CONTENT_TYPE=content_type,
        CONTENT_LENGTH=DECLARED,
        **{"wsgi.input": NeverRead()},
    )


def many_fields(count: int, **fields: str) -> str:
    return "&".join([*(f"{name}={value}" for name, value in fields.items()), *(f"f{i}=x" for i in range(count))])


class DeclaredTooLargeTests(TestCase):
    def assert_oauth_refusal(self, response: Any, *, status: int) -> None:
        self.assertEqual(response.status_code, status, response.content[:300])
        self.assertEqual(response["Content-Type"], "application/json")
        self.assertEqual(response.json()["error"], "invalid_request")
        self.assertEqual(response["Cache-Control"], "no-store")

    def test_the_token_endpoint_answers_413_invalid_request_unread(self) -> None:
        response = post_declaring(self.client, TOKEN, content_type=FORM)

        self.assert_oauth_refusal(response, status=413)

    def test_registration_answers_413_invalid_request_unread(self) -> None:
        response = post_declaring(self.client, REGISTER, content_type="application/json")

        self.assert_oauth_refusal(response, status=413)

    def test_the_sign_in_page_answers_413_with_its_error_page_unread(self) -> None:
        response = post_declaring(self.client, SIGN_IN, content_type="multipart/form-data; boundary=x")

        self.assertEqual(response.status_code, 413)
        self.assertContains(response, "Request refused", status_code=413)
        self.assertTemplateUsed(response, "oauth/error.html")

    def test_the_headless_path_answers_413_in_its_json_unread(self) -> None:
        response = post_declaring(self.client, HEADLESS_START, content_type="application/json")

        self.assertEqual(response.status_code, 413)
        self.assertEqual(response.json()["error"]["code"], "invalid_arguments")
        self.assertEqual(response.json()["error"]["field"], "body")

    def test_an_mcp_endpoint_answers_413_in_json_rpc_unread(self) -> None:
        message = envelope("tools/list")

        response = post_declaring(self.client, DOCS_PATH, content_type="application/json", **routing_headers(message))

        self.assertEqual(response.status_code, 413)
        self.assertEqual(response.json()["error"]["code"], -32600)

    def test_any_other_page_answers_413_in_plain_text_unread(self) -> None:
        response = post_declaring(self.client, ADMIN_SIGN_IN, content_type=FORM)

        self.assertEqual(response.status_code, 413)
        self.assertEqual(response["Content-Type"], "text/plain; charset=utf-8")

    def test_a_body_of_exactly_the_limit_is_still_read(self) -> None:
        body = many_fields(0, grant_type="nonsense", pad="")
        body += "x" * (MIB - len(body))

        response = self.client.post(TOKEN, data=body, content_type=FORM)

        self.assertEqual(response.status_code, 400)
        self.assertEqual(response.json()["error"], "unsupported_grant_type")


class TooManyFieldsTests(TestCase):
    def test_the_token_endpoint_answers_400_invalid_request(self) -> None:
        with self.assertLogs("django.security.TooManyFieldsSent", "ERROR"):
            response = self.client.post(
                TOKEN, data=many_fields(1001, grant_type="authorization_code"), content_type=FORM
            )

        self.assertEqual(response.status_code, 400, response.content[:300])
        self.assertEqual(response["Content-Type"], "application/json")
        self.assertEqual(response.json()["error"], "invalid_request")

    def test_the_revocation_endpoint_answers_400_invalid_request(self) -> None:
        with self.assertLogs("django.security.TooManyFieldsSent", "ERROR"):
            response = self.client.post(REVOKE, data=many_fields(1001, token="x"), content_type=FORM)

        self.assertEqual(response.status_code, 400, response.content[:300])
        self.assertEqual(response.json()["error"], "invalid_request")

    def test_a_multipart_body_without_a_boundary_answers_400_invalid_request(self) -> None:
        for path in (TOKEN, REVOKE):
            with self.subTest(path), self.assertLogs("django.request", "WARNING"):
                response = self.client.post(path, data=b"x", content_type="multipart/form-data")

            self.assertEqual(response.status_code, 400, response.content[:300])
            self.assertEqual(response.json()["error"], "invalid_request")

    def test_the_sign_in_page_answers_400_with_its_error_page(self) -> None:
        with self.assertLogs("django.security.TooManyFieldsSent", "ERROR"):
            response = self.client.post(SIGN_IN, data=many_fields(1001, email="a@b.test"), content_type=FORM)

        self.assertContains(response, "too many fields", status_code=400)
        self.assertTemplateUsed(response, "oauth/error.html")

    def test_the_sign_in_page_answers_400_when_the_csrf_check_reads_the_form_first(self) -> None:
        browser = Client(enforce_csrf_checks=True)
        browser.get(SIGN_IN)  # the CSRF cookie: the check reads the form only once it has one

        with self.assertLogs("django.security.TooManyFieldsSent", "ERROR"):
            response = browser.post(SIGN_IN, data=many_fields(1001, email="a@b.test"), content_type=FORM)

        self.assertContains(response, "too many fields", status_code=400)

    def test_the_admin_sign_in_answers_400_in_plain_text(self) -> None:
        make_user(email="staff@acme.test", is_staff=True)

        with self.assertLogs("django.security.TooManyFieldsSent", "ERROR"):
            response = self.client.post(
                ADMIN_SIGN_IN, data=many_fields(1001, username="staff@acme.test"), content_type=FORM
            )

        self.assertEqual(response.status_code, 400)
        self.assertEqual(response["Content-Type"], "text/plain; charset=utf-8")

    def test_a_thousand_fields_are_still_read(self) -> None:
        response = self.client.post(TOKEN, data=many_fields(999, grant_type="nonsense"), content_type=FORM)

        self.assertEqual(response.status_code, 400)
        self.assertEqual(json.loads(response.content)["error"], "unsupported_grant_type")
