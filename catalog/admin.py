from __future__ import annotations

from decimal import Decimal
from typing import Any, cast

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from a2a_service.core.admin_base import ReadOnlyAdmin, StaffAdmin
from a2a_service.core.fastcache import free_documents_forget
from a2a_service.core.money import ATOMIC_PER_USDC, atomic_from_usdc
from catalog.analytics.prediction_match import prediction_match_review
from catalog.analytics.sentiment import news_score
from catalog.editorial.track_record import desk_enable
from catalog.feeds.registry import feed_get
from catalog.feeds.runner import feed_run
from catalog.models import (
    AgentFrameworkPack,
    CalendarEvent,
    Candle,
    CatalogAgent,
    DailyCounter,
    DeskSignal,
    DeskState,
    EditorialPiece,
    EquityQuote,
    ExchangeMarket,
    FeedState,
    FundingRate,
    GasFeeBlock,
    Integration,
    IntelSnapshot,
    NewsItem,
    OrderBook,
    PartnerAgent,
    PartnerSignal,
    PredictionMarket,
    PredictionPrice,
    RegimeSnapshot,
    RpcEndpoint,
    RpcProbe,
    Sku,
    SpreadSnapshot,
    Teaser,
    TelemetryNode,
    TokenizedAsset,
    TradingModule,
    WorkerHeartbeat,
    YieldPool,
)
from catalog.models.calendar import MANUAL
from catalog.models.prediction_match import PredictionMatch as PredictionMatchModel
from catalog.services import sku_set_status


class UsdcPriceForm(forms.ModelForm):
    """Staff type prices in USDC (0.08); the database keeps atomic units (80000)."""

    price_usdc = forms.DecimalField(
        label="price (USDC)",
        max_digits=14,
        decimal_places=6,
        min_value=Decimal("0"),
        help_text="what the very next request charges",
    )
    price_fields: tuple[str, str] = ("price_usdc", "price_atomic")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        form_field, model_field = self.price_fields
        if self.instance and self.instance.pk and getattr(self.instance, model_field) is not None:
            self.fields[form_field].initial = Decimal(getattr(self.instance, model_field)) / ATOMIC_PER_USDC

    def save(self, commit: bool = True):
        form_field, model_field = self.price_fields
        setattr(self.instance, model_field, atomic_from_usdc(self.cleaned_data[form_field]))
        return super().save(commit=commit)


class SkuAdminForm(UsdcPriceForm):
    class Meta:
        model = Sku
        exclude = ["price_atomic"]


@admin.register(Sku)
class SkuAdmin(StaffAdmin):
    form = SkuAdminForm
    list_display = ["sku", "path", "price_display", "status", "tier", "hero", "family", "session_callable"]
    list_filter = ["status", "tier", "hero", "family", "product_type", "session_callable", "intel_only"]
    search_fields = ["sku", "path", "headline"]
    actions = ["enable_skus", "disable_skus"]
    readonly_fields = ["created_at", "updated_at"]

    @admin.display(description="price (USDC)", ordering="price_atomic")
    def price_display(self, obj: Sku) -> str:
        return f"{obj.price_usdc:g}"

    @admin.action(description="Enable selected SKUs (live_x402)", permissions=["change"])
    def enable_skus(self, request: HttpRequest, queryset: QuerySet[Sku]) -> None:
        n = sku_set_status(sku_ids=list(queryset.values_list("id", flat=True)), status=Sku.Status.LIVE)
        self.message_user(request, f"{n} SKU(s) enabled", messages.SUCCESS)

    @admin.action(description="Disable selected SKUs", permissions=["change"])
    def disable_skus(self, request: HttpRequest, queryset: QuerySet[Sku]) -> None:
        n = sku_set_status(sku_ids=list(queryset.values_list("id", flat=True)), status=Sku.Status.DISABLED)
        self.message_user(request, f"{n} SKU(s) disabled", messages.SUCCESS)


class NewsItemForm(UsdcPriceForm):
    price_usdc = forms.DecimalField(
        label="unlock price (USDC)",
        max_digits=14,
        decimal_places=6,
        min_value=Decimal("0"),
        required=False,
        help_text="empty: the category's default (0.18 equity/general, 0.1 crypto)",
    )

    class Meta:
        model = NewsItem
        exclude = ["price_atomic"]

    def save(self, commit: bool = True):
        if self.cleaned_data.get("price_usdc") is None:
            self.instance.price_atomic = None  # the model applies the category default
            return forms.ModelForm.save(self, commit=commit)
        return super().save(commit=commit)


@admin.register(NewsItem)
class NewsItemAdmin(admin.ModelAdmin):
    form = NewsItemForm
    list_display = [
        "id",
        "title",
        "category",
        "source",
        "market_group",
        "price_usdc",
        "sentiment_label",
        "sentiment_compound",
        "replay",
        "ingested_at",
    ]
    list_filter = ["category", "source", "market_group", "sentiment_label", "replay"]
    search_fields = ["title", "teaser", "body", "source", "external_id"]
    date_hierarchy = "ingested_at"
    # Provenance is the feed's; a price set here stays (a re-run of the feed never reprices).
    # The sentiment is computed (feed or `manage.py score_news`), never typed in.
    readonly_fields = [
        "external_id",
        "title_hash",
        "published_at",
        "replay",
        "ingested_at",
        "sentiment_compound",
        "sentiment_label",
        "sentiment_scored_at",
    ]

    def save_model(self, request: HttpRequest, obj: NewsItem, form: forms.ModelForm, change: bool) -> None:
        # An item typed in (or retitled) here is scored like an ingested one.
        if not change or {"title", "teaser"} & set(form.changed_data):
            score = news_score(title=obj.title, teaser=obj.teaser)
            obj.sentiment_compound, obj.sentiment_label = score.compound, score.label
            obj.sentiment_scored_at = timezone.now()
        super().save_model(request, obj, form, change)


@admin.register(FeedState)
class FeedStateAdmin(ReadOnlyAdmin):
    """What each feed source's last passes did (written by catalog/feeds/runner.py). The
    schedule itself is under Periodic tasks (django-celery-beat)."""

    list_display = [
        "name",
        "last_success_at",
        "last_attempt_at",
        "rows_written",
        "last_replay",
        "consecutive_failures",
        "next_attempt_at",
        "last_duration_ms",
        "error_excerpt",
        "failed_feeds_excerpt",
        "last_oddities",
    ]
    list_filter = ["last_replay"]
    actions = ["run_now"]

    @admin.display(description="last error")
    def error_excerpt(self, obj: FeedState) -> str:
        return obj.last_error[:120]

    @admin.display(description="failed feeds")
    def failed_feeds_excerpt(self, obj: FeedState) -> str:
        failed = [f for f in obj.last_failed_feeds or [] if isinstance(f, dict)]
        return "; ".join(f"{f.get('feed')}: {f.get('reason')}" for f in failed)[:200]

    @admin.action(description="Run one pass of the selected sources now", permissions=["operate"])
    def run_now(self, request: HttpRequest, queryset: QuerySet[FeedState]) -> None:
        # Now and here (not queued), even while backed off: staff see the outcome at once.
        for name in queryset.values_list("name", flat=True):
            if feed_get(name) is None:
                self.message_user(request, f"{name}: no such source is installed", messages.WARNING)
                continue
            state = feed_run(name=name, force=True)
            outcome = getattr(state, "outcome", "")
            if outcome == "ok":
                self.message_user(
                    request,
                    f"{name}: {state.rows_written} row(s) written{' (replay)' if state.last_replay else ''}",
                    messages.SUCCESS,
                )
            elif outcome == "running":
                self.message_user(request, f"{name}: a pass is already running", messages.WARNING)
            else:
                self.message_user(request, f"{name}: failed: {state.last_error[:300]}", messages.ERROR)


@admin.register(Teaser)
class TeaserAdmin(admin.ModelAdmin):
    list_display = ["name", "title", "sku", "credit_path", "updated_at"]
    search_fields = ["name", "title", "summary"]
    list_filter = ["sku__family"]
    autocomplete_fields = ["sku"]


@admin.register(CatalogAgent)
class CatalogAgentAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "enabled", "sort_order"]
    list_filter = ["enabled"]
    search_fields = ["slug", "name", "description"]
    filter_horizontal = ["skus"]


@admin.register(AgentFrameworkPack)
class AgentFrameworkPackAdmin(admin.ModelAdmin):
    list_display = ["pack_id", "name", "framework", "enabled", "updated_at"]
    list_filter = ["enabled", "framework"]
    search_fields = ["pack_id", "name", "skill_md"]


@admin.register(Integration)
class IntegrationAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "category", "registration_target", "enabled"]
    list_filter = ["category", "registration_target", "enabled"]
    search_fields = ["slug", "name", "description"]


@admin.register(PartnerAgent)
class PartnerAgentAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "url", "signals_url", "enabled", "added_at"]
    list_filter = ["enabled"]
    search_fields = ["slug", "name", "description", "url"]


@admin.register(PartnerSignal)
class PartnerSignalAdmin(admin.ModelAdmin):
    """Ingested by the federation feed: read-only here (the partner is the source of truth)."""

    list_display = ["partner", "external_id", "symbol", "side", "entry_price", "published_at", "replay"]
    list_filter = ["partner", "side", "replay"]
    search_fields = ["external_id", "symbol"]
    date_hierarchy = "published_at"

    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False


class EditorialPieceForm(forms.ModelForm):
    class Meta:
        model = EditorialPiece
        fields = ["kind", "title", "summary", "body", "published_at"]

    def clean(self) -> dict[str, Any]:
        # Browsers submit a textarea's lines with CRLF: stored as typed, a staff-written brief's
        # paragraphs ("\n\n") would not be found (the promo cut) and the API would serve "\r\n".
        cleaned = super().clean() or {}
        for name, value in cleaned.items():
            if isinstance(value, str):
                cleaned[name] = value.replace("\r\n", "\n").replace("\r", "\n")
        return cleaned


@admin.register(EditorialPiece)
class EditorialPieceAdmin(StaffAdmin):
    form = EditorialPieceForm
    list_display = ["title", "kind", "published_at", "author", "updated_at"]
    list_filter = ["kind", ("published_at", admin.EmptyFieldListFilter)]
    search_fields = ["title", "summary", "body"]
    date_hierarchy = "created_at"
    readonly_fields = ["author", "created_at", "updated_at"]
    actions = ["publish_now", "unpublish"]

    def save_model(self, request: HttpRequest, obj: EditorialPiece, form, change: bool) -> None:
        if obj.author_id is None:
            # The admin serves authenticated staff only, so this is a User, never AnonymousUser.
            obj.author = cast(User, request.user)
        super().save_model(request, obj, form, change)

    @admin.action(description="Publish now", permissions=["change"])
    def publish_now(self, request: HttpRequest, queryset: QuerySet[EditorialPiece]) -> None:
        n = queryset.update(published_at=timezone.now())
        transaction.on_commit(free_documents_forget)  # a bulk update sends no post_save
        self.message_user(request, f"{n} piece(s) published", messages.SUCCESS)

    @admin.action(description="Unpublish (back to draft)", permissions=["change"])
    def unpublish(self, request: HttpRequest, queryset: QuerySet[EditorialPiece]) -> None:
        n = queryset.update(published_at=None)
        transaction.on_commit(free_documents_forget)  # a bulk update sends no post_save
        self.message_user(request, f"{n} piece(s) unpublished", messages.SUCCESS)


@admin.register(TradingModule)
class TradingModuleAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "mode", "sku"]
    list_filter = ["mode"]
    search_fields = ["slug", "name"]


@admin.register(CalendarEvent)
class CalendarEventAdmin(admin.ModelAdmin):
    """Macro events: the calendar feed's (read-only here: the next pass would overwrite an
    edit) and the ones staff add (source "manual", theirs to edit; no pass touches them)."""

    list_display = [
        "starts_at",
        "title",
        "impact",
        "category",
        "country",
        "source",
        "calendar",
        "impact_basis",
        "all_day",
        "replay",
    ]
    list_filter = ["impact", "source", "calendar", "category", "country", "replay", "all_day"]
    search_fields = ["title", "description", "uid", "category"]
    date_hierarchy = "starts_at"
    fields = [
        "title",
        "impact",
        "category",
        "country",
        "starts_at",
        "ends_at",
        "all_day",
        "description",
        "url",
        "source",
        "calendar",
        "uid",
        "impact_basis",
        "replay",
        "observed_at",
    ]
    readonly_fields = ["source", "calendar", "uid", "impact_basis", "replay", "observed_at"]

    def has_change_permission(self, request: HttpRequest, obj: CalendarEvent | None = None) -> bool:
        if obj is not None and obj.ingested:
            return False  # the feed's row: shown, not edited
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: CalendarEvent | None = None) -> bool:
        if obj is not None and obj.ingested:
            return False  # the next pass would bring it back; the calendar is the source
        return super().has_delete_permission(request, obj)

    def save_model(self, request: HttpRequest, obj: CalendarEvent, form, change: bool) -> None:
        # Whatever staff save here is a staff event: no feed upserts or prunes it.
        obj.source, obj.calendar, obj.uid = MANUAL, "", ""
        obj.impact_basis = MANUAL
        obj.replay = False
        super().save_model(request, obj, form, change)


@admin.register(EquityQuote)
class EquityQuoteAdmin(ReadOnlyAdmin):
    list_display = [
        "symbol",
        "name",
        "price",
        "currency",
        "quoted_at",
        "source",
        "venue_symbol",
        "replay",
        "observed_at",
    ]
    list_filter = ["source", "currency", "replay"]
    search_fields = ["symbol", "name", "venue_symbol"]


@admin.register(DeskState)
class DeskStateAdmin(StaffAdmin):
    """A desk killed by its drawdown publishes nothing until staff re-enable it here (its
    drawdown then counts from the re-enable: catalog/editorial/track_record.py)."""

    list_display = ["desk", "enabled", "killed_at", "kill_reason", "kill_drawdown_pct", "record_since"]
    list_filter = ["enabled"]
    readonly_fields = ["killed_at", "kill_reason", "record_since", "updated_at"]
    actions = ["reenable_desks"]

    @admin.action(description="Re-enable selected desks (clear the kill state)", permissions=["change"])
    def reenable_desks(self, request: HttpRequest, queryset: QuerySet[DeskState]) -> None:
        for state in queryset:
            desk_enable(desk=state.desk)
        self.message_user(request, f"{queryset.count()} desk(s) re-enabled", messages.SUCCESS)


@admin.register(RpcEndpoint)
class RpcEndpointAdmin(admin.ModelAdmin):
    list_display = ["name", "url", "affiliate_url", "region", "country", "origin", "enabled"]
    list_filter = ["enabled", "origin"]
    search_fields = ["name", "url"]
    # Rows of the setting are rewritten by each probe pass (only their affiliate link and
    # `enabled` stay staff's until the next pass); rows staff add are staff's.
    readonly_fields = ["origin"]


for model, fields in [
    (
        ExchangeMarket,
        [
            "exchange",
            "symbol",
            "last_price",
            "spread_bps",
            "volume_24h_usd",
            "source",
            "replay",
            "updated_at",
        ],
    ),
    (
        TokenizedAsset,
        [
            "symbol",
            "name",
            "venue",
            "on_watchlist",
            "last_price",
            "underlying",
            "underlying_price",
            "underlying_as_of",
            "source",
            "replay",
            "updated_at",
        ],
    ),
    (Candle, ["exchange", "symbol", "timeframe", "open_time", "close", "volume", "replay"]),
    (FundingRate, ["exchange", "symbol", "rate", "funding_at", "next_funding_at", "replay", "observed_at"]),
    (OrderBook, ["exchange", "symbol", "depth", "book_at", "replay", "observed_at"]),
    (PredictionMarket, ["venue", "question", "yes_price", "volume_usd", "closes_at", "status", "replay"]),
    (PredictionPrice, ["market", "yes_price", "replay", "observed_at"]),
    (YieldPool, ["project", "chain", "symbol", "tvl_usd", "apy", "apy_mean_30d", "replay", "observed_at"]),
    (
        TelemetryNode,
        ["node_id", "region", "country", "online", "latency_ms", "source", "replay", "last_seen_at"],
    ),
    (RegimeSnapshot, ["regime", "confidence", "computed_at"]),
    (
        DeskSignal,
        [
            "desk",
            "symbol",
            "side",
            "venue",
            "label",
            "entry_price",
            "status",
            "exit_reason",
            "pnl_pct",
            "opened_at",
            "closed_at",
        ],
    ),
    (IntelSnapshot, ["computed_at", "regime", "as_of", "replay"]),
    (
        RpcProbe,
        [
            "endpoint",
            "ok",
            "latency_ms",
            "block_number",
            "lag_blocks",
            "client_version",
            "error",
            "replay",
            "probed_at",
        ],
    ),
    (
        GasFeeBlock,
        [
            "chain_id",
            "block_number",
            "base_fee_wei",
            "gas_used_ratio",
            "priority_fee_p50_wei",
            "replay",
            "observed_at",
        ],
    ),
    (
        SpreadSnapshot,
        ["symbol", "venue_a", "venue_b", "spread_bps", "net_bps", "source", "replay", "captured_at"],
    ),
    (DailyCounter, ["day", "metric", "key", "count"]),
    (WorkerHeartbeat, ["name", "hostname", "beat_at"]),
]:
    admin.site.register(model, type(f"{model.__name__}Admin", (ReadOnlyAdmin,), {"list_display": fields}))


# --- cross-venue prediction pairs (catalog/analytics/prediction_match.py) ------------------------
@admin.register(PredictionMatchModel)
class PredictionMatchAdmin(StaffAdmin):
    """Staff confirm a computed pair (confidence 1, sold as a match whatever the score) or reject
    it (never suggested again, no divergence alert). The matching pass writes the rows."""

    list_display = [
        "id",
        "market_a",
        "market_b",
        "confidence",
        "status",
        "rules_mismatch",
        "yes_a",
        "yes_b",
        "net_gap",
        "divergent",
        "computed_at",
    ]
    list_filter = ["status", "divergent"]
    search_fields = ["market_a__question", "market_b__question"]
    actions = ["confirm_pairs", "reject_pairs"]
    readonly_fields = [f.name for f in PredictionMatchModel._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def _review(self, request: HttpRequest, queryset: QuerySet[PredictionMatchModel], status: str) -> None:
        for pk in queryset.values_list("pk", flat=True):
            prediction_match_review(match_id=pk, status=status)
        self.message_user(request, f"{queryset.count()} pair(s) {status}", messages.SUCCESS)

    @admin.action(description="Confirm selected pairs (same event: confidence 1)", permissions=["change"])
    def confirm_pairs(self, request: HttpRequest, queryset: QuerySet[PredictionMatchModel]) -> None:
        self._review(request, queryset, PredictionMatchModel.Status.CONFIRMED)

    @admin.action(description="Reject selected pairs (never suggested again)", permissions=["change"])
    def reject_pairs(self, request: HttpRequest, queryset: QuerySet[PredictionMatchModel]) -> None:
        self._review(request, queryset, PredictionMatchModel.Status.REJECTED)


# --- grant scout (catalog/feeds/grants/) ---------------------------------------------------------
from catalog.models import GrantFeed, GrantProgram  # noqa: E402 (appended block: merged from a parallel change)


@admin.register(GrantFeed)
class GrantFeedAdmin(admin.ModelAdmin):
    """The RSS/Atom feeds of grant and ecosystem-fund announcements the grants feed reads."""

    list_display = ["name", "url", "enabled", "created_at"]
    list_filter = ["enabled"]
    search_fields = ["name", "url"]


@admin.register(GrantProgram)
class GrantProgramAdmin(ReadOnlyAdmin):
    """Read from the grant feeds (the feed is the source of truth)."""

    list_display = ["title", "source", "deadline", "published_at", "replay", "observed_at"]
    list_filter = ["source", "replay"]
    search_fields = ["title", "summary", "url"]
