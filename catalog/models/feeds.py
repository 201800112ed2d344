"""Data ingested from outside feeds (exchanges, prediction venues, chain, telemetry)
and what the service computes from it. Feeds fill these tables; the free catalogs
and the published figures read them, so an empty table is reported as empty."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class ExchangeMarket(models.Model):
    exchange = models.CharField(max_length=64)
    symbol = models.CharField(max_length=40)
    base = models.CharField(max_length=20)
    quote = models.CharField(max_length=20)
    last_price = models.DecimalField(max_digits=30, decimal_places=12, null=True, blank=True)
    volume_24h_usd = models.DecimalField(max_digits=24, decimal_places=2, null=True, blank=True)
    spread_bps = models.DecimalField(max_digits=12, decimal_places=3, null=True, blank=True)
    bid = models.DecimalField(max_digits=30, decimal_places=12, null=True, blank=True)
    ask = models.DecimalField(max_digits=30, decimal_places=12, null=True, blank=True)
    bid_size = models.DecimalField(max_digits=30, decimal_places=12, null=True, blank=True)
    ask_size = models.DecimalField(max_digits=30, decimal_places=12, null=True, blank=True)
    volume_24h_base = models.DecimalField(max_digits=30, decimal_places=8, null=True, blank=True)
    # Provenance: the feed that wrote the row ("" for rows typed in), and whether from a replay.
    source = models.CharField(max_length=32, blank=True)
    replay = models.BooleanField(default=False)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-volume_24h_usd", "symbol"]
        constraints = [models.UniqueConstraint(fields=["exchange", "symbol"], name="exchange_market_unique")]

    def __str__(self) -> str:
        return f"{self.exchange}:{self.symbol}"


class TokenizedAsset(models.Model):
    symbol = models.CharField(max_length=40, unique=True)
    name = models.CharField(max_length=120)
    venue = models.CharField(max_length=64)
    underlying = models.CharField(max_length=64, blank=True)
    on_watchlist = models.BooleanField(default=True)
    last_price = models.DecimalField(max_digits=30, decimal_places=12, null=True, blank=True)
    change_24h_pct = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True)
    # The underlying's reference price (a listed equity's quote, catalog.models.EquityQuote),
    # where a keyless source gives it; the premium products compare last_price with it.
    underlying_price = models.DecimalField(max_digits=24, decimal_places=6, null=True, blank=True)
    underlying_source = models.CharField(max_length=32, blank=True)
    underlying_as_of = models.DateTimeField(null=True, blank=True)
    underlying_replay = models.BooleanField(default=False)
    source = models.CharField(max_length=32, blank=True)
    replay = models.BooleanField(default=False)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["symbol"]

    def __str__(self) -> str:
        return self.symbol


class TelemetryNode(models.Model):
    """A node of the telemetry map. The RPC probe feed (catalog/feeds/rpcprobe/) keeps one per
    probed endpoint: node_id the endpoint's name, version its web3_clientVersion, latency and
    online from its last probe, last_seen_at when it was last probed. Staff may add others."""

    node_id = models.CharField(max_length=128, unique=True)
    region = models.CharField(max_length=64, blank=True)
    country = models.CharField(max_length=2, blank=True)
    version = models.CharField(max_length=64, blank=True)
    latency_ms = models.FloatField(null=True, blank=True)
    online = models.BooleanField(default=True)
    last_seen_at = models.DateTimeField(default=timezone.now)
    # Provenance: the feed that wrote the row ("" for rows typed in), and whether from a replay.
    source = models.CharField(max_length=32, blank=True)
    replay = models.BooleanField(default=False)

    class Meta:
        ordering = ["node_id"]

    def __str__(self) -> str:
        return self.node_id


class RegimeSnapshot(models.Model):
    regime = models.CharField(max_length=32)
    confidence = models.FloatField()
    inputs = models.JSONField(default=dict, blank=True)
    computed_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-computed_at"]
        get_latest_by = "computed_at"

    def __str__(self) -> str:
        return f"{self.regime} @ {self.computed_at:%Y-%m-%d %H:%M}"


class DeskSignal(models.Model):
    """A signal a desk published, and its outcome once closed. The scorecard and the
    performance figures are computed from these rows only.

    Published by `desk_signal_publish` (catalog/editorial/track_record.py) with its entry, ATR stop and
    target and an expiry; closed by `desk_signals_settle` on the candles ingested after it
    opened (the stop or the target touched, else the expiry), which stores the exit price, the
    pnl and the reason. Saving a new row pushes `copy_signal`; closing one at a loss pushes
    `risk_exit_alert` (webhooks/signals.py)."""

    class Side(models.TextChoices):
        LONG = "long", "long"
        SHORT = "short", "short"

    class Status(models.TextChoices):
        OPEN = "open", "open"
        CLOSED = "closed", "closed"

    class ExitReason(models.TextChoices):
        TARGET = "target", "target reached"
        STOP = "stop", "stop hit"
        EXPIRY = "expiry", "horizon expired"

    desk = models.CharField(max_length=64, db_index=True)
    symbol = models.CharField(max_length=40)
    side = models.CharField(max_length=8, choices=Side.choices)
    entry_price = models.DecimalField(max_digits=30, decimal_places=12)
    exit_price = models.DecimalField(max_digits=30, decimal_places=12, null=True, blank=True)
    pnl_pct = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True)
    opened_at = models.DateTimeField(default=timezone.now, db_index=True)
    closed_at = models.DateTimeField(null=True, blank=True, db_index=True)
    # What the desk published (null on rows typed in before these existed).
    venue = models.CharField(
        max_length=64, blank=True, help_text="the exchange whose prices open and close it"
    )
    timeframe = models.CharField(max_length=8, blank=True, help_text="the candles it was computed on")
    label = models.CharField(max_length=16, blank=True, help_text="STRONG_SELL .. STRONG_BUY")
    score = models.FloatField(null=True, blank=True, help_text="the signal's score in [-1, 1]")
    confidence = models.FloatField(null=True, blank=True, help_text="0..1")
    stop_price = models.DecimalField(max_digits=30, decimal_places=12, null=True, blank=True)
    target_price = models.DecimalField(max_digits=30, decimal_places=12, null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="closed at the price then (horizon)")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN, db_index=True)
    exit_reason = models.CharField(max_length=8, choices=ExitReason.choices, blank=True)
    basis = models.JSONField(default=dict, blank=True, help_text="why: regime, votes summary, sizing gate")

    class Meta:
        ordering = ["-opened_at"]

    def __str__(self) -> str:
        return f"{self.desk} {self.side} {self.symbol}"

    def save(self, *args, **kwargs) -> None:
        # A row closed by hand (admin, tests) is closed whatever status it was typed with.
        if self.closed_at is not None:
            self.status = self.Status.CLOSED
        super().save(*args, **kwargs)


class TradingModule(models.Model):
    class Mode(models.TextChoices):
        LIVE = "live", "live"
        SCOUT = "scout", "scout"

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=120)
    description = models.TextField()
    mode = models.CharField(max_length=8, choices=Mode.choices, default=Mode.SCOUT)
    sku = models.ForeignKey("catalog.Sku", null=True, blank=True, on_delete=models.SET_NULL)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class RpcEndpoint(models.Model):
    """A JSON-RPC endpoint the RPC probe feed measures. Rows of origin `setting` mirror
    RPC_PROBE_URLS (kept in sync by each pass: one dropped from the setting is disabled);
    rows staff add in the admin are `staff` and only ever changed by staff."""

    class Origin(models.TextChoices):
        SETTING = "setting", "setting (RPC_PROBE_URLS)"
        STAFF = "staff", "staff"

    name = models.CharField(max_length=120, unique=True)
    url = models.URLField(max_length=500)
    affiliate_url = models.URLField(max_length=500, blank=True)
    enabled = models.BooleanField(default=True)
    region = models.CharField(max_length=64, blank=True)
    country = models.CharField(max_length=2, blank=True, help_text="ISO 3166 alpha-2, if known")
    origin = models.CharField(max_length=8, choices=Origin.choices, default=Origin.STAFF)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class RpcProbe(models.Model):
    """One measurement of one endpoint: ok when eth_blockNumber answered; latency of that call
    (connection setup included); the head it reported and its lag behind the best head among
    the endpoints of the same chain probed in the same pass; chain id and client version."""

    endpoint = models.ForeignKey(RpcEndpoint, on_delete=models.CASCADE, related_name="probes")
    ok = models.BooleanField()
    latency_ms = models.FloatField(null=True, blank=True)
    block_number = models.BigIntegerField(null=True, blank=True)
    lag_blocks = models.BigIntegerField(null=True, blank=True)
    chain_id = models.BigIntegerField(null=True, blank=True)
    client_version = models.CharField(max_length=200, blank=True)
    error = models.CharField(max_length=300, blank=True)
    replay = models.BooleanField(default=False)
    probed_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-probed_at"]
        # The speed index reads one endpoint's probes of the last 24 hours.
        indexes = [models.Index(fields=["endpoint", "-probed_at"], name="rpc_probe_endpoint_time")]

    def __str__(self) -> str:
        return f"{self.endpoint_id} {'ok' if self.ok else 'fail'} {self.probed_at:%H:%M:%S}"


class SpreadSnapshot(models.Model):
    """A structural cross-venue spread reading: written after each exchanges pass (the best
    venue pair of each symbol: buy at venue_a's ask, sell at venue_b's bid) or pushed by the
    internal ingest endpoint. A reading at or over PAIR_ARB_ALERT_BPS pushes pair_arb_alert
    when its pair crosses the threshold (webhooks/signals.py)."""

    symbol = models.CharField(max_length=40, db_index=True)
    venue_a = models.CharField(max_length=64)
    venue_b = models.CharField(max_length=64)
    # The gross gap in bps of the mid (the exchanges feed: venue_b's bid over venue_a's ask;
    # negative while the books do not cross); an ingested reading's own figure.
    spread_bps = models.DecimalField(max_digits=12, decimal_places=3)
    # The gap net of both venues' taker fees, where the writer knows the fees (the exchanges
    # feed); None for ingested readings.
    net_bps = models.DecimalField(max_digits=12, decimal_places=3, null=True, blank=True)
    # Provenance: "exchanges" (the feed), "ingest" (the internal endpoint); replayed or live.
    source = models.CharField(max_length=32, blank=True)
    replay = models.BooleanField(default=False)
    captured_at = models.DateTimeField(default=timezone.now, db_index=True)
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-captured_at"]

    def __str__(self) -> str:
        return f"{self.symbol} {self.venue_a}/{self.venue_b} {self.spread_bps} bps"
