"""Modules and knowledge sources of an organization, and the chunks search reads (docs/data-model.md).

Fields, constraints and indexes only: reads live in selectors.py, writes in
services.py. Full-text search structures (PostgreSQL tsvector/GIN, SQLite FTS5)
are created per database vendor by migrations (knowledge/search/schema.py), not
declared here. The tables keep the names they had in the organizations app, where
these models began (knowledge/migrations/0001_models_from_organizations.py).
"""

import uuid

from django.db import models

from organizations.models import Organization


class ModuleStatus(models.TextChoices):
    DRAFT = "draft", "Draft"
    PUBLISHED = "published", "Published"
    ARCHIVED = "archived", "Archived"


class SourceKind(models.TextChoices):
    FILE = "file", "File"
    URL = "url", "URL"
    TEXT = "text", "Text"


class SourceStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    PROCESSING = "processing", "Processing"
    PROCESSED = "processed", "Processed"
    FAILED = "failed", "Failed"


class Source(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="sources")
    title = models.CharField(max_length=300)
    kind = models.CharField(max_length=8, choices=SourceKind.choices)
    origin = models.CharField(max_length=1000, blank=True)
    status = models.CharField(max_length=12, choices=SourceStatus.choices, default=SourceStatus.PENDING)
    text = models.TextField(blank=True)
    processed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "organizations_source"
        indexes = [
            # id last: listings order by (processed_at, id), and an import batch shares one processed_at.
            models.Index(fields=["organization", "status", "-processed_at", "-id"], name="source_org_status_idx"),
            models.Index(fields=["organization", "origin"], name="source_org_origin_idx"),
        ]

    def __str__(self) -> str:
        return self.title


class SourceChunk(models.Model):
    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="chunks")
    # Always the source's organization (written only by the services). Copied
    # here so the search index holds the organization and a search reads only
    # its own organization's entries (docs/development/architecture.md#search).
    # No index of its own: the search index serves it on PostgreSQL, and only
    # deleting a whole organization filters on it alone.
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="+", editable=False, db_index=False
    )
    index = models.PositiveIntegerField()
    text = models.TextField()

    class Meta:
        db_table = "organizations_sourcechunk"
        ordering = ["source", "index"]
        constraints = [models.UniqueConstraint(fields=["source", "index"], name="one_chunk_per_source_index")]

    def __str__(self) -> str:
        return f"{self.source_id}#{self.index}"


class Module(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="modules")
    title = models.CharField(max_length=300)
    summary = models.TextField(blank=True)
    status = models.CharField(max_length=12, choices=ModuleStatus.choices, default=ModuleStatus.DRAFT)
    sources = models.ManyToManyField(Source, blank=True, related_name="modules")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "organizations_module"
        indexes = [
            models.Index(fields=["organization", "-updated_at"], name="module_org_updated_idx"),
            models.Index(fields=["organization", "status", "-updated_at"], name="module_org_status_idx"),
        ]

    def __str__(self) -> str:
        return self.title


class ModuleSection(models.Model):
    module = models.ForeignKey(Module, on_delete=models.CASCADE, related_name="sections")
    position = models.PositiveIntegerField()
    title = models.CharField(max_length=300)
    body = models.TextField(help_text="Markdown")

    class Meta:
        db_table = "organizations_modulesection"
        ordering = ["module", "position"]
        constraints = [models.UniqueConstraint(fields=["module", "position"], name="one_section_per_position")]

    def __str__(self) -> str:
        return f"{self.module_id} §{self.position}: {self.title}"
