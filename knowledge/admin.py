"""Django admin for staff: modules and sources.

Django's admin already refuses anyone who is not active staff. A new source goes
through `create_source`, which processes it; reprocessing through
`reprocess_sources`. A source's text cannot be edited in place, so its chunks
always match it.
"""

from typing import TYPE_CHECKING, Any, TypedDict, cast

from django import forms
from django.contrib import admin, messages
from django.db.models import Count, QuerySet
from django.http import HttpRequest

from knowledge.models import Module, ModuleSection, Source
from knowledge.processing import normalise_text
from knowledge.services import create_source, reprocess_sources

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    class SectionCount(TypedDict):  # what ModuleAdmin.get_queryset annotates
        section_count: int


class ModuleSectionInline(admin.StackedInline):
    model = ModuleSection
    extra = 0
    fields = ("position", "title", "body")


class ModuleForm(forms.ModelForm):
    class Meta:
        model = Module
        fields = ("organization", "title", "summary", "status", "sources")

    def clean(self) -> dict:
        # ModelForm.clean returns cleaned_data; its type allows None, for overrides that return nothing.
        cleaned = cast(dict[str, Any], super().clean())
        organization = cleaned.get("organization")
        foreign = [s for s in cleaned.get("sources") or [] if organization and s.organization_id != organization.id]
        if foreign:
            raise forms.ValidationError("A module can only use sources of its own organization.")
        return cleaned


@admin.register(Module)
class ModuleAdmin(admin.ModelAdmin):
    form = ModuleForm
    list_display = ("title", "organization", "status", "section_count", "updated_at")
    list_filter = ("status", "organization")
    search_fields = ("title", "summary")
    list_select_related = ("organization",)
    filter_horizontal = ("sources",)
    inlines = (ModuleSectionInline,)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Module]:
        return super().get_queryset(request).annotate(section_count=Count("sections"))

    @admin.display(description="Sections", ordering="section_count")
    def section_count(self, module: "WithAnnotations[Module, SectionCount]") -> int:
        return module.section_count


class SourceForm(forms.ModelForm):
    class Meta:
        model = Source
        fields = ("organization", "title", "kind", "origin", "text")

    def clean_text(self) -> str:
        text = self.cleaned_data.get("text") or ""
        if self.instance.pk is None and not normalise_text(text):
            raise forms.ValidationError("A new source needs some text to process.")
        return text


@admin.register(Source)
class SourceAdmin(admin.ModelAdmin):
    form = SourceForm
    list_display = ("title", "organization", "kind", "status", "chunk_count", "processed_at")
    list_filter = ("status", "kind", "organization")
    search_fields = ("title", "origin")
    list_select_related = ("organization",)
    actions = ("reprocess",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Source]:
        return super().get_queryset(request).annotate(chunk_count=Count("chunks"))

    def get_readonly_fields(self, request: HttpRequest, obj: Source | None = None) -> tuple[str, ...]:
        if obj is None:
            return ()
        return ("organization", "kind", "text", "status", "processed_at", "chunk_count")

    @admin.display(description="Chunks", ordering="chunk_count")
    def chunk_count(self, source: Source) -> int:
        return getattr(source, "chunk_count", None) or source.chunks.count()

    def save_model(self, request: HttpRequest, obj: Source, form: forms.ModelForm, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        source = create_source(
            organization=obj.organization, title=obj.title, kind=obj.kind, origin=obj.origin, text=obj.text
        )
        obj.pk = source.pk
        obj.refresh_from_db()

    @admin.action(description="Reprocess selected sources")
    def reprocess(self, request: HttpRequest, queryset: QuerySet[Source]) -> None:
        outcome = reprocess_sources(queryset.order_by("id"))
        level = messages.WARNING if outcome.failed else messages.SUCCESS
        self.message_user(request, f"Reprocessed {outcome.processed} source(s); {outcome.failed} failed.", level)
