"""Grant and ecosystem-fund programs: the feeds staff list in the admin (GrantFeed) and the
programs the grants feed adapter (catalog/feeds/grants/) reads from them (GrantProgram)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class GrantFeed(models.Model):
    name = models.CharField(max_length=120, unique=True)
    url = models.URLField(max_length=500, help_text="an RSS 2.0 or Atom feed of grant announcements")
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class GrantProgram(models.Model):
    feed = models.ForeignKey(
        GrantFeed, null=True, blank=True, on_delete=models.SET_NULL, related_name="programs"
    )
    external_id = models.CharField(
        max_length=300, help_text="the feed's id (else the link), for de-duplication"
    )
    title = models.CharField(max_length=400)
    url = models.URLField(max_length=500, blank=True)
    summary = models.TextField(blank=True)
    # Parsed from the entry's text or its date fields when it states one; empty: no deadline known.
    deadline = models.DateTimeField(null=True, blank=True, db_index=True)
    source = models.CharField(max_length=120, help_text="the feed's name")
    published_at = models.DateTimeField(null=True, blank=True, db_index=True)
    replay = models.BooleanField(default=False)
    observed_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["deadline", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["source", "external_id"], name="grant_program_unique_source_external_id"
            )
        ]

    def __str__(self) -> str:
        return self.title[:80]
