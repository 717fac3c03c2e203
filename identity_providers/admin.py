"""Django admin for staff: organizations' identity providers, with their domains inline.

Django's admin already refuses anyone who is not active staff, and each page
asks for the provider model's own permissions (the domains inline asks for the
same ones). The client secret is a write-only field: never rendered, left blank
on a change to keep the stored one. A save goes through one service call
(`add_provider` or `change_provider`, with the domains of the inline), which
writes the audit event; a provider's organization and issuer never change
(people's links name the issuer): add another provider instead.
"""

from typing import Any, cast

from django import forms
from django.contrib import admin
from django.contrib.auth import get_permission_codename
from django.db.models import QuerySet
from django.http import HttpRequest

from identity_providers.models import IdentityProvider, ProviderDomain
from identity_providers.services import (
    VIA_ADMIN,
    add_provider,
    change_provider,
    remove_provider,
    valid_client_secret,
    valid_ema_client_ids,
    valid_settings,
)
from identity_providers.validation import MAX_ISSUER_LENGTH, valid_domain, valid_issuer
from operator_core.errors import InvalidArguments
from operator_core.signed_in import signed_in_person


def _checked(check: Any, value: Any) -> Any:
    """`check(value)`, with its InvalidArguments as the form error it is."""
    try:
        return check(value)
    except InvalidArguments as error:
        raise forms.ValidationError(error.message) from None


class ProviderDomainForm(forms.ModelForm):
    class Meta:
        model = ProviderDomain
        fields = ("domain",)
        error_messages = {
            "domain": {"unique": "Another provider serves this domain already: a domain belongs to one provider."}
        }

    def clean_domain(self) -> str:
        return cast(str, _checked(valid_domain, self.cleaned_data["domain"]))


class ProviderDomainFormSet(forms.BaseInlineFormSet):
    def clean(self) -> None:
        # The admin's inline passes no validate_min: a provider that serves no domain signs in no one.
        super().clean()
        if not any(form.cleaned_data.get("domain") for form in self.forms if form not in self.deleted_forms):
            raise forms.ValidationError("Give at least one email domain the provider serves.")


class ProviderDomainInline(admin.TabularInline):
    model = ProviderDomain
    form = ProviderDomainForm
    formset = ProviderDomainFormSet
    extra = 0
    min_num = 1

    # The domains are part of the provider: its permissions govern them, not ProviderDomain's own.
    def has_add_permission(self, request: HttpRequest, obj: IdentityProvider | None = None) -> bool:
        return _may(request, "change" if obj is not None else "add")

    def has_change_permission(self, request: HttpRequest, obj: IdentityProvider | None = None) -> bool:
        return _may(request, "change" if obj is not None else "add")

    def has_delete_permission(self, request: HttpRequest, obj: IdentityProvider | None = None) -> bool:
        return _may(request, "change" if obj is not None else "add")

    def has_view_permission(self, request: HttpRequest, obj: IdentityProvider | None = None) -> bool:
        return _may(request, "view") or _may(request, "change")


def _may(request: HttpRequest, action: str) -> bool:
    options = IdentityProvider._meta
    return request.user.has_perm(f"{options.app_label}.{get_permission_codename(action, options)}")


class IdentityProviderForm(forms.ModelForm):
    # A plain text field: valid_issuer decides, and nothing prefixes a scheme to what staff typed.
    issuer = forms.CharField(
        max_length=MAX_ISSUER_LENGTH,
        help_text="Exactly as the provider states it, such as https://acme.okta.com/oauth2/default. "
        "It cannot be changed later.",
    )
    client_secret = forms.CharField(
        label="Client secret",
        required=False,
        strip=False,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="Stored sealed and never shown again. On a change, leave it blank to keep the current secret.",
    )

    class Meta:
        model = IdentityProvider
        fields = (
            "organization",
            "issuer",
            "client_id",
            "required",
            "create_requesters",
            "enterprise_managed",
            "ema_client_ids",
            "link_by_email",
        )
        labels = {"enterprise_managed": "Enterprise-managed authorization", "ema_client_ids": "Enterprise clients"}
        help_texts = {
            "enterprise_managed": "Accept ID-JAGs this provider signs as grants for the organization, "
            "with no consent page (docs/authentication.md#enterprise-managed-authorization).",
            "link_by_email": "Link an ID-JAG's unlinked subject to the account of its email when the email "
            "is in the provider's domains, as a first single sign-on does.",
        }

    ema_client_ids = forms.CharField(
        label="Enterprise clients",
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="The client IDs its ID-JAGs may name, one per line. Empty: any client registered here.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk is not None:
            self.initial["ema_client_ids"] = "\n".join(self.instance.ema_client_ids)

    def clean_ema_client_ids(self) -> list[str]:
        return list(_checked(valid_ema_client_ids, str(self.cleaned_data["ema_client_ids"]).splitlines()))

    def clean(self) -> dict[str, Any]:
        cleaned = cast(dict[str, Any], super().clean())
        if (cleaned.get("ema_client_ids") or cleaned.get("link_by_email")) and not cleaned.get("enterprise_managed"):
            # What valid_settings refuses, said on the form rather than at the save.
            raise forms.ValidationError(
                "Enterprise clients and linking by email apply only with enterprise-managed authorization on."
            )
        return cleaned

    def clean_issuer(self) -> str:
        return cast(str, _checked(valid_issuer, self.cleaned_data["issuer"]))

    def clean_client_secret(self) -> str:
        secret = cast(str, self.cleaned_data["client_secret"])
        if not secret and self.instance.pk is not None:
            return ""
        return cast(str, _checked(valid_client_secret, secret))


@admin.register(IdentityProvider)
class IdentityProviderAdmin(admin.ModelAdmin):
    form = IdentityProviderForm
    inlines = (ProviderDomainInline,)
    list_display = (
        "issuer",
        "organization",
        "client_id",
        "domain_list",
        "required",
        "create_requesters",
        "enterprise_managed",
    )
    list_filter = ("required", "create_requesters", "enterprise_managed")
    search_fields = ("issuer", "organization__slug", "domains__domain")
    list_select_related = ("organization",)
    readonly_fields = ("created_at", "updated_at")

    def get_queryset(self, request: HttpRequest) -> QuerySet[IdentityProvider]:
        return super().get_queryset(request).prefetch_related("domains")

    def get_readonly_fields(self, request: HttpRequest, obj: IdentityProvider | None = None) -> tuple[str, ...]:
        fixed = ("organization", "issuer") if obj is not None else ()
        return (*fixed, "created_at", "updated_at")

    @admin.display(description="Domains")
    def domain_list(self, provider: IdentityProvider) -> str:
        return ", ".join(domain.domain for domain in provider.domains.all())

    def save_model(self, request: HttpRequest, obj: IdentityProvider, form: forms.ModelForm, change: bool) -> None:
        """Nothing yet: the provider is written with its domains, in `save_related`, by one service call."""

    def save_related(
        self, request: HttpRequest, form: forms.ModelForm, formsets: list[forms.BaseInlineFormSet], change: bool
    ) -> None:
        provider = cast(IdentityProvider, form.instance)
        domains: list[str] = []
        for formset in formsets:
            domains += [
                inline.cleaned_data["domain"]
                for inline in formset.forms
                if inline.cleaned_data.get("domain") and inline not in formset.deleted_forms
            ]
            # What the admin's change message reads; the service wrote the rows.
            formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []
        settings = valid_settings(
            client_id=provider.client_id,
            domains=domains,
            required=provider.required,
            create_requesters=provider.create_requesters,
            enterprise_managed=provider.enterprise_managed,
            ema_client_ids=provider.ema_client_ids,
            link_by_email=provider.link_by_email,
        )
        secret = cast(str, form.cleaned_data["client_secret"])
        person = signed_in_person(request)
        if change:
            change_provider(
                provider=provider, client_secret=secret or None, settings=settings, changed_by=person, via=VIA_ADMIN
            )
            return
        added = add_provider(
            organization=provider.organization,
            issuer=provider.issuer,
            client_secret=secret,
            settings=settings,
            changed_by=person,
            via=VIA_ADMIN,
        )
        # The admin logs and redirects to the object it built: it becomes the saved row.
        provider.pk, provider.client_secret_sealed = added.pk, added.client_secret_sealed

    def delete_model(self, request: HttpRequest, obj: IdentityProvider) -> None:
        remove_provider(provider=obj, changed_by=signed_in_person(request), via=VIA_ADMIN)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[IdentityProvider]) -> None:
        for provider in queryset:
            remove_provider(provider=provider, changed_by=signed_in_person(request), via=VIA_ADMIN)
