from django.urls import reverse

from knowledge.models import Source, SourceStatus
from knowledge.services import mark_source_failed
from tests.factories import make_membership, make_source
from tests.organizations.test_admin import AdminTestCase


class AdminSourceTests(AdminTestCase):
    def test_adding_a_source_processes_it(self) -> None:
        organization = make_membership().organization

        response = self.client.post(
            reverse("admin:knowledge_source_add"),
            {"organization": organization.pk, "title": "Memo", "kind": "text", "origin": "", "text": "Hello there."},
        )

        self.assertEqual(response.status_code, 302)
        source = Source.objects.get()
        self.assertEqual((source.status, source.chunks.count()), (SourceStatus.PROCESSED, 1))

    def test_reprocess_action_processes_the_selected_sources(self) -> None:
        source = mark_source_failed(make_source(text="Recoverable text."))

        response = self.client.post(
            reverse("admin:knowledge_source_changelist"),
            {"action": "reprocess", "_selected_action": [str(source.pk)]},
        )

        self.assertEqual(response.status_code, 302)
        source.refresh_from_db()
        self.assertEqual((source.status, source.chunks.count()), (SourceStatus.PROCESSED, 1))
