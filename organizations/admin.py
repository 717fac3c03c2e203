"""Django admin for staff: organizations and memberships.

Django's admin already refuses anyone who is not active staff. Writes that keep
an invariant go through services: a new membership through `add_membership`, a
role change (on the membership page or inline on the organization page) through
`record_role_change`, which writes the admin log entry naming the old and new
role. Modules and sources: knowledge/admin.py.
"""

from typing import TYPE_CHECKING, Any, TypedDict, cast

from django import forms
from django.contrib import admin
from django.contrib.admin.models import LogEntry
from django.db.models import Count, QuerySet
from django.http import HttpRequest

from operator_core.signed_in import signed_in_person
from organizations.models import Membership, Organization
from organizations.services import add_membership, record_role_change, remove_membership

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    class MemberCount(TypedDict):  # what OrganizationAdmin.get_queryset annotates
        member_count: int


def _save_membership(request: HttpRequest, membership: Membership, *, role_changed: bool) -> Membership:
    """Route a membership saved by the admin through the services; returns the saved row."""
    if membership.pk is None:
        return add_membership(
            user=membership.user,
            organization=membership.organization,
            role=membership.role,
            changed_by=signed_in_person(request),
        )
    if role_changed:
        new_role = membership.role
        membership.role = Membership.objects.values_list("role", flat=True).get(pk=membership.pk)
        return record_role_change(membership=membership, role=new_role, changed_by=signed_in_person(request))
    return membership


class MembershipInlineForm(forms.ModelForm):
    class Meta:
        model = Membership
        fields = ("user", "role")

    def clean_user(self) -> object:
        user = self.cleaned_data["user"]
        if self.instance.pk is not None and user.pk != self.instance.user_id:
            raise forms.ValidationError("A membership cannot move to another person: delete it and add a new one.")
        return user


class MembershipInline(admin.TabularInline):
    model = Membership
    form = MembershipInlineForm
    extra = 0
    fields = ("user", "role", "updated_at")
    readonly_fields = ("updated_at",)
    raw_id_fields = ("user",)


@admin.register(Organization)
class OrganizationAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "member_count", "created_at")
    search_fields = ("name", "slug")
    prepopulated_fields = {"slug": ("name",)}
    inlines = (MembershipInline,)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Organization]:
        return super().get_queryset(request).annotate(member_count=Count("memberships"))

    @admin.display(description="People", ordering="member_count")
    def member_count(self, organization: "WithAnnotations[Organization, MemberCount]") -> int:
        return organization.member_count

    def save_formset(
        self, request: HttpRequest, form: forms.ModelForm, formset: forms.BaseInlineFormSet, change: bool
    ) -> None:
        if formset.model is not Membership:
            super().save_formset(request, form, formset, change)
            return
        # Inline edits go through the same services as the membership page; role
        # changes are logged by record_role_change, so they are left out of the
        # organization's own change message.
        formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []
        for inline_form in formset.forms:
            if not inline_form.has_changed() or inline_form in formset.deleted_forms:
                continue
            membership = inline_form.instance
            membership.organization = form.instance
            is_new = membership.pk is None
            saved = _save_membership(request, membership, role_changed="role" in inline_form.changed_data)
            if is_new:
                formset.new_objects.append(saved)
        for deleted in formset.deleted_forms:
            if deleted.instance.pk is not None:
                formset.deleted_objects.append(deleted.instance)
                remove_membership(membership=deleted.instance, changed_by=signed_in_person(request))


class MembershipForm(forms.ModelForm):
    class Meta:
        model = Membership
        fields = ("user", "organization", "role")

    def clean(self) -> dict:
        # ModelForm.clean returns cleaned_data; its type allows None, for overrides that return nothing.
        cleaned = cast(dict[str, Any], super().clean())
        user, organization = cleaned.get("user"), cleaned.get("organization")
        is_new = self.instance.pk is None
        if (
            is_new
            and user
            and organization
            and Membership.objects.filter(user=user, organization=organization).exists()
        ):
            raise forms.ValidationError("This person already has a role in this organization.")
        return cleaned


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    form = MembershipForm
    list_display = ("user_email", "organization", "role", "updated_at")
    list_filter = ("role", "organization")
    search_fields = ("user__email",)
    list_select_related = ("user", "organization")
    raw_id_fields = ("user",)

    @admin.display(description="Email", ordering="user__email")
    def user_email(self, membership: Membership) -> str:
        return membership.user.email

    def get_readonly_fields(self, request: HttpRequest, obj: Membership | None = None) -> tuple[str, ...]:
        # A membership moves neither to another person nor to another organization.
        return ("user", "organization") if obj is not None else ()

    def delete_model(self, request: HttpRequest, obj: Membership) -> None:
        remove_membership(membership=obj, changed_by=signed_in_person(request))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Membership]) -> None:
        for membership in queryset:
            remove_membership(membership=membership, changed_by=signed_in_person(request))

    def save_model(self, request: HttpRequest, obj: Membership, form: forms.ModelForm, change: bool) -> None:
        saved = _save_membership(request, obj, role_changed=change and "role" in form.changed_data)
        obj.pk, obj.role = saved.pk, saved.role

    # Django ignores what log_change returns (ModelAdmin._changeform_view); the stubs promise an entry.
    def log_change(  # type: ignore[override]
        self, request: HttpRequest, obj: Membership, message: list[dict[str, Any]]
    ) -> LogEntry | None:
        # record_role_change already wrote the entry naming the old and new role.
        if message and all(set(item.get("changed", {}).get("fields", [])) <= {"Role"} for item in message):
            return None
        return super().log_change(request, obj, message)
