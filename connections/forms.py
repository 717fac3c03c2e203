"""The client-policy form of the organization connections page."""

from __future__ import annotations

from typing import Any, cast

from django import forms

MODE_ANY = "any"
MODE_LISTED = "listed"


class ClientPolicyForm(forms.Form):
    mode = forms.ChoiceField(choices=[(MODE_ANY, "Any client"), (MODE_LISTED, "Only these clients")])
    hosts = forms.CharField(required=False, max_length=5000)
    clients = forms.MultipleChoiceField(required=False)
    dynamic_clients = forms.BooleanField(required=False)

    def __init__(self, *args: Any, client_ids: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.MultipleChoiceField, self.fields["clients"]).choices = [
            (client_id, client_id) for client_id in client_ids
        ]
