import hashlib
import html
import re
from urllib.parse import urlsplit

from django.test import Client

from oauth.models import Grant
from operator_core.scopes import SCOPE_DESCRIPTIONS, SCOPE_OPERATOR_READ
from organizations.models import Role
from tests.factories import make_membership, make_organization, make_user
from tests.oauth.client_registrations import CLIENT_REGISTRATIONS
from tests.oauth.support import AUTHORIZE, REDIRECT_URI, OAuthTestCase, pkce_pair, query_of


class SignInRequiredTests(OAuthTestCase):
    def test_anonymous_person_is_sent_to_sign_in_and_back(self) -> None:
        client_id = self.register()["client_id"]
        _verifier, challenge = pkce_pair()

        response = self.browser.get(AUTHORIZE, self.authorize_params(client_id, challenge))

        self.assertEqual(response.status_code, 302)
        location = urlsplit(response["Location"])
        self.assertEqual(location.path, "/api/auth/sign-in")
        self.assertTrue(query_of(response["Location"])["next"][0].startswith(AUTHORIZE + "?"))


class ConsentPageTests(OAuthTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.client_id = self.register(client_name="Claude Desktop")["client_id"]

    def consent_page(self, user):
        self.sign_in(user)
        _verifier, challenge = pkce_pair()
        return self.browser.get(AUTHORIZE, self.authorize_params(self.client_id, challenge))

    def test_page_names_the_client_its_redirect_and_the_scopes_in_words(self) -> None:
        member = make_membership(role=Role.MEMBER)

        response = self.consent_page(member.user)

        self.assertEqual(response.status_code, 200)
        self.assertContains(response, "Claude Desktop")
        self.assertContains(response, REDIRECT_URI)
        self.assertContains(response, "See your organization&#x27;s modules and knowledge sources")
        self.assertContains(response, 'name="csrfmiddlewaretoken"')
        self.assertContains(response, 'name="allow"')
        self.assertContains(response, 'name="deny"')
        self.assertEqual(response["X-Frame-Options"], "DENY")

    def test_both_operator_scopes_read_as_one_plain_sentence(self) -> None:
        member = make_membership(role=Role.MEMBER)
        self.sign_in(member.user)
        _verifier, challenge = pkce_pair()

        response = self.browser.get(
            AUTHORIZE,
            self.authorize_params(self.client_id, challenge, scope="mcp:operator.read mcp:operator.write"),
        )

        self.assertEqual(response.context["scope_descriptions"], [SCOPE_DESCRIPTIONS[SCOPE_OPERATOR_READ]])
        self.assertNotContains(response, "compatibility")

    def test_page_loads_nothing_from_other_hosts(self) -> None:
        member = make_membership(role=Role.MEMBER)

        body = self.consent_page(member.user).content.decode()

        self.assertNotIn("<script", body)
        self.assertNotIn("src=", body)
        self.assertEqual(
            re.findall(r'<link[^>]*href="([^"]*)"', body),
            ["/static/site_pages/site.css", "/static/site_pages/favicon.svg"],
        )
        self.assertNotIn("<style", body)
        self.assertNotIn("style=", body)
        self.assertIn('name="viewport"', body)

    def test_chooser_lists_only_organizations_where_the_person_is_admin_or_member(self) -> None:
        user = make_user()
        admin_of = make_membership(user=user, role=Role.ADMIN).organization
        member_of = make_membership(user=user, role=Role.MEMBER).organization
        learner_of = make_membership(user=user, role=Role.LEARNER).organization
        requester_of = make_membership(user=user, role=Role.REQUESTER).organization
        make_organization()

        response = self.consent_page(user)

        listed = {organization.pk for organization in response.context["organizations"]}
        self.assertEqual(listed, {admin_of.pk, member_of.pk})
        self.assertContains(response, 'type="radio"', count=2)
        self.assertNotContains(response, learner_of.name)
        self.assertNotContains(response, requester_of.name)

    def test_one_eligible_organization_shows_no_chooser(self) -> None:
        member = make_membership(role=Role.MEMBER)

        response = self.consent_page(member.user)

        self.assertNotContains(response, 'type="radio"')
        self.assertContains(response, member.organization.name)

    def test_learner_is_refused_with_403(self) -> None:
        learner = make_membership(role=Role.LEARNER)

        response = self.consent_page(learner.user)

        self.assertEqual(response.status_code, 403)
        self.assertTemplateUsed(response, "oauth/forbidden.html")

    def test_403_page_offers_to_tell_the_client_it_was_refused_and_why(self) -> None:
        learner = make_membership(role=Role.LEARNER)
        self.sign_in(learner.user)

        response = self.browser.get(AUTHORIZE, self.authorize_params(self.client_id, pkce_pair()[1]))

        self.assertEqual(response.status_code, 403)
        link = re.search(r'<a href="([^"]+)" id="return-to-application">', response.content.decode())
        location = html.unescape(link.group(1))
        self.assertTrue(location.startswith(REDIRECT_URI + "?"), location)
        query = query_of(location)
        self.assertEqual(query["error"], ["access_denied"])
        self.assertIn("member role", query["error_description"][0])
        self.assertEqual(query["state"], ["state-123"])
        self.assertEqual(query["iss"], ["http://testserver/api/auth"])
        self.assertContains(response, "Claude Desktop", status_code=403)
        self.assertFalse(Grant.objects.exists())

    def test_requester_is_refused_with_403(self) -> None:
        requester = make_membership(role=Role.REQUESTER)

        response = self.consent_page(requester.user)

        self.assertEqual(response.status_code, 403)

    def test_person_without_any_role_is_refused_with_403(self) -> None:
        response = self.consent_page(make_user())

        self.assertEqual(response.status_code, 403)
        self.assertFalse(Grant.objects.exists())


class ConsentDecisionTests(OAuthTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.client_id = self.register()["client_id"]

    def test_allow_redirects_with_code_state_and_issuer(self) -> None:
        member = make_membership(role=Role.MEMBER)
        self.sign_in(member.user)

        response, _verifier = self.consent(self.client_id)

        self.assertEqual(response.status_code, 302)
        self.assertTrue(response["Location"].startswith(REDIRECT_URI + "?"))
        query = query_of(response["Location"])
        self.assertEqual(query["state"], ["state-123"])
        self.assertEqual(query["iss"], ["http://testserver/api/auth"])
        self.assertEqual(Grant.objects.get().organization, member.organization)

    def test_native_client_is_sent_back_to_its_private_use_scheme(self) -> None:
        native_uri = "com.example.agent:/oauth/callback"
        client_id = self.register(application_type="native", redirect_uris=[native_uri])["client_id"]
        self.sign_in(make_membership(role=Role.MEMBER).user)

        response, _verifier = self.consent(client_id, redirect_uri=native_uri)

        self.assertEqual(response.status_code, 302)
        self.assertTrue(response["Location"].startswith(native_uri + "?"))
        self.assertIn("code", query_of(response["Location"]))

    def test_cursor_is_sent_back_to_its_scheme_and_exchanges_the_code(self) -> None:
        cursor = CLIENT_REGISTRATIONS["cursor"]
        callback = cursor["redirect_uris"][0]
        client_id = self.register(**cursor)["client_id"]
        self.sign_in(make_membership(role=Role.MEMBER).user)

        authorization = self.authorize(client_id, redirect_uri=callback)

        self.assertTrue(authorization.redirect.startswith(callback + "?"))
        tokens = self.exchange(client_id, authorization, redirect_uri=callback)
        self.assertEqual(tokens.status_code, 200, tokens.content)

    def test_auto_approval_prompt_still_shows_the_consent_page(self) -> None:
        member = make_membership(role=Role.MEMBER)
        self.sign_in(member.user)
        self.tokens_for(self.client_id)

        page = self.browser.get(
            AUTHORIZE, self.authorize_params(self.client_id, pkce_pair()[1], approval_prompt="auto")
        )

        self.assertEqual(page.status_code, 200)
        self.assertTemplateUsed(page, "oauth/consent.html")

    def test_chosen_organization_is_bound_to_the_grant(self) -> None:
        user = make_user()
        make_membership(user=user, role=Role.MEMBER)
        chosen = make_membership(user=user, role=Role.ADMIN).organization
        self.sign_in(user)

        self.authorize(self.client_id, organization=chosen)

        self.assertEqual(Grant.objects.get().organization, chosen)

    def test_authorization_code_is_stored_only_as_a_digest(self) -> None:
        member = make_membership(role=Role.MEMBER)
        self.sign_in(member.user)

        authorization = self.authorize(self.client_id)

        stored = Grant.objects.values_list("code", flat=True).get()
        self.assertNotEqual(stored, authorization.code)
        self.assertNotIn(authorization.code, stored)
        self.assertEqual(stored, hashlib.sha256(authorization.code.encode()).hexdigest())

    def test_deny_returns_access_denied_to_the_client(self) -> None:
        member = make_membership(role=Role.MEMBER)
        self.sign_in(member.user)

        response, _verifier = self.consent(self.client_id, allow=False)

        self.assertEqual(response.status_code, 302)
        query = query_of(response["Location"])
        self.assertEqual(query["error"], ["access_denied"])
        self.assertEqual(query["state"], ["state-123"])
        self.assertEqual(query["iss"], ["http://testserver/api/auth"])
        self.assertFalse(Grant.objects.exists())

    def test_forged_organization_is_refused(self) -> None:
        member = make_membership(role=Role.MEMBER)
        foreign = make_organization()
        self.sign_in(member.user)

        response, _verifier = self.consent(self.client_id, organization=foreign)

        self.assertEqual(response.status_code, 403)
        self.assertFalse(Grant.objects.exists())

    def test_organization_where_the_person_is_learner_is_refused(self) -> None:
        user = make_user()
        make_membership(user=user, role=Role.MEMBER)
        make_membership(user=user, role=Role.MEMBER)
        learner_of = make_membership(user=user, role=Role.LEARNER).organization
        self.sign_in(user)

        response, _verifier = self.consent(self.client_id, organization=learner_of)

        self.assertEqual(response.status_code, 403)
        self.assertFalse(Grant.objects.exists())

    def test_several_organizations_and_no_choice_is_refused(self) -> None:
        user = make_user()
        make_membership(user=user, role=Role.MEMBER)
        make_membership(user=user, role=Role.MEMBER)
        self.sign_in(user)

        response, _verifier = self.consent(self.client_id)

        self.assertEqual(response.status_code, 403)
        self.assertFalse(Grant.objects.exists())

    def test_consent_for_a_tampered_client_id_is_refused(self) -> None:
        member = make_membership(role=Role.MEMBER)
        self.sign_in(member.user)
        page = self.browser.get(AUTHORIZE, self.authorize_params(self.client_id, pkce_pair()[1]))
        form = {key: value for key, value in page.context["form"].initial.items() if value is not None}

        response = self.browser.post(
            AUTHORIZE,
            {**form, "client_id": "no-such-client", "organization": str(member.organization.pk), "allow": "true"},
        )

        self.assertEqual(response.status_code, 400)
        self.assertFalse(Grant.objects.exists())

    def test_consent_without_csrf_token_is_refused(self) -> None:
        member = make_membership(role=Role.MEMBER)
        self.browser = Client(enforce_csrf_checks=True)
        self.sign_in(member.user)
        page = self.browser.get(AUTHORIZE, self.authorize_params(self.client_id, pkce_pair()[1]))
        form = {key: value for key, value in page.context["form"].initial.items() if value is not None}

        response = self.browser.post(AUTHORIZE, {**form, "organization": str(member.organization.pk), "allow": "true"})

        self.assertEqual(response.status_code, 403)
        self.assertFalse(Grant.objects.exists())
