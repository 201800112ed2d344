"""Staff-written content: teasers, catalog agents, framework packs, integrations,
partners and editorial pieces."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class Teaser(models.Model):
    name = models.SlugField(max_length=64, unique=True)
    title = models.CharField(max_length=200)
    summary = models.TextField()
    sku = models.ForeignKey(
        "catalog.Sku", null=True, blank=True, on_delete=models.SET_NULL, related_name="teasers"
    )
    credit_path = models.CharField(
        max_length=200, blank=True, help_text="X-API-Key route, for teasers without an x402 SKU"
    )
    highlights = models.JSONField(
        default=list, blank=True, help_text="list of short strings: what the paid product holds"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class CatalogAgent(models.Model):
    """A catalog agent. What it lists as skills is what its JSON-RPC endpoint answers: each
    SKU it sells while on sale (paid, with its price) and the free catalogs named in
    `free_skills` (agents/a2a/skills.py agent_skills); nothing is listed that it cannot call."""

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=120)
    description = models.TextField()
    free_skills = models.JSONField(
        default=list,
        blank=True,
        help_text='names of the free catalogs this agent also answers, e.g. ["news_catalog"] '
        "(the hub's free skills: telemetry_status, news_catalog, exchange_market_discovery, "
        "tokenized_watchlist, market_agent_news); any other name is not listed",
    )
    skus = models.ManyToManyField("catalog.Sku", blank=True, related_name="agents")
    enabled = models.BooleanField(default=True)
    sort_order = models.PositiveIntegerField(default=100)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["sort_order", "slug"]

    def __str__(self) -> str:
        return self.slug


class AgentFrameworkPack(models.Model):
    pack_id = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=120)
    framework = models.CharField(max_length=80)
    description = models.TextField()
    skill_md = models.TextField(help_text="SKILL.md text; {base_url} is replaced by the service's address")
    enabled = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["pack_id"]

    def __str__(self) -> str:
        return self.pack_id


class Integration(models.Model):
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=120)
    category = models.CharField(max_length=64)
    description = models.TextField()
    docs_path = models.CharField(
        max_length=300, blank=True, help_text="path (on this service) or URL to read"
    )
    registration_target = models.BooleanField(
        default=False, help_text="an external marketplace or registry the service lists itself on"
    )
    enabled = models.BooleanField(default=True)
    sort_order = models.PositiveIntegerField(default=100)

    class Meta:
        ordering = ["sort_order", "slug"]

    def __str__(self) -> str:
        return self.name


class PartnerAgent(models.Model):
    """A federated partner agent that staff list in the public partner catalog."""

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=120)
    description = models.TextField()
    url = models.URLField(max_length=500)
    agent_card_url = models.URLField(max_length=500, blank=True)
    # Where the partner publishes its signals as JSON (catalog/feeds/federation/ reads it and
    # the federation_signal_resale product resells them with attribution); empty: none.
    signals_url = models.URLField(max_length=500, blank=True)
    skills = models.JSONField(default=list, blank=True)
    enabled = models.BooleanField(default=True)
    added_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class EditorialPieceQuerySet(models.QuerySet["EditorialPiece"]):
    def published(self) -> EditorialPieceQuerySet:
        return self.filter(published_at__isnull=False, published_at__lte=timezone.now())


class EditorialPiece(models.Model):
    class Kind(models.TextChoices):
        MORNING_BRIEF = "morning_brief", "morning brief"
        ROADMAP = "roadmap", "on-chain AI roadmap"
        CASE_STUDY = "case_study", "case study / partner playbook"
        RESEARCH = "research", "research"
        REGULATORY = "regulatory", "tech regulatory"
        GRANTS = "grants", "grants"
        PROMOTION = "promotion", "promotion"

    kind = models.CharField(max_length=32, choices=Kind.choices, db_index=True)
    title = models.CharField(max_length=300)
    summary = models.TextField(help_text="free part")
    body = models.TextField(help_text="full text (paid where a SKU sells it)")
    published_at = models.DateTimeField(null=True, blank=True, db_index=True, help_text="empty = draft")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    # A morning brief composed from the data (catalog/editorial/briefs.py): when, for which UTC day, and
    # its sections (lines with their sources) and inputs' provenance. A piece staff saved in the
    # admin has an author: the next composition of that day leaves it alone.
    composed_at = models.DateTimeField(null=True, blank=True, editable=False)
    brief_date = models.DateField(null=True, blank=True, editable=False, db_index=True)
    sections = models.JSONField(default=dict, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = EditorialPieceQuerySet.as_manager()

    class Meta:
        ordering = ["-published_at", "-id"]

    def __str__(self) -> str:
        return f"{self.kind}: {self.title}"
