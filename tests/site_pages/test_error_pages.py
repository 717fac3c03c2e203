"""404 and 500: a styled page for people, JSON for the addresses machines read (/api/, /.well-known/)."""

from django.test import TestCase, override_settings

BROWSER_ACCEPT = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


class NotFoundPageTests(TestCase):
    def test_a_page_address_gets_the_styled_page(self) -> None:
        response = self.client.get("/nothing-here", headers=BROWSER_ACCEPT)

        self.assertEqual(response.status_code, 404)
        self.assertTemplateUsed(response, "site_pages/error.html")
        self.assertContains(response, "Page not found", status_code=404)
        self.assertContains(response, "/static/site_pages/site.css", status_code=404)
        self.assertContains(response, '<a href="/docs/">', status_code=404)

    def test_an_unknown_docs_page_gets_the_styled_page(self) -> None:
        response = self.client.get("/docs/nothing-here", headers=BROWSER_ACCEPT)

        self.assertContains(response, "Page not found", status_code=404)

    def test_the_path_is_not_echoed(self) -> None:
        response = self.client.get("/<script>alert(1)</script>", headers=BROWSER_ACCEPT)

        self.assertNotContains(response, "alert(1)", status_code=404)

    def test_api_and_well_known_addresses_answer_json(self) -> None:
        for path in ("/api/nothing", "/api/auth/nothing", "/.well-known/nothing"):
            with self.subTest(path=path):
                response = self.client.get(path, headers={"Accept": "application/json"})

                self.assertEqual(response.status_code, 404)
                self.assertEqual(response["Content-Type"], "application/json")
                self.assertEqual(response.json()["error"]["code"], "not_found")

    def test_a_json_address_answers_json_without_an_accept_header(self) -> None:
        response = self.client.get("/api/nothing")

        self.assertEqual(response.json()["error"]["code"], "not_found")

    def test_a_browser_at_a_json_address_gets_the_page(self) -> None:
        response = self.client.get("/api/nothing", headers=BROWSER_ACCEPT)

        self.assertContains(response, "Page not found", status_code=404)

    def test_unknown_mcp_paths_keep_their_own_json(self) -> None:
        response = self.client.get("/api/mcp/nothing", headers=BROWSER_ACCEPT)

        self.assertEqual(response.status_code, 404)
        self.assertIn("/api/mcp/operator", response.json()["error"]["message"])


@override_settings(ROOT_URLCONF="tests.site_pages.urls")
class ServerErrorPageTests(TestCase):
    def setUp(self) -> None:
        self.client.raise_request_exception = False

    def get(self, path: str, **headers: str):
        with self.assertLogs("django.request", "ERROR"):
            return self.client.get(path, headers=headers)

    def test_a_page_address_gets_the_styled_page_without_detail(self) -> None:
        response = self.get("/fails", **BROWSER_ACCEPT)

        self.assertEqual(response.status_code, 500)
        self.assertContains(response, "Something went wrong", status_code=500)
        self.assertContains(response, "/static/site_pages/site.css", status_code=500)
        self.assertNotContains(response, "a bug", status_code=500)

    def test_an_api_address_answers_json_without_detail(self) -> None:
        response = self.get("/api/fails", Accept="application/json")

        self.assertEqual(response.status_code, 500)
        self.assertEqual(response.json(), {"error": {"code": "internal_error", "message": "Internal error."}})
