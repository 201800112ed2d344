"""Settings of the analytics (imported by base): signals, regime and track record, copy signals
and alerts, the desks, the morning brief."""

from __future__ import annotations

from .environment import env

# --- signals, regime, track record (catalog/analytics/signals.py, catalog/editorial/intel.py) ------------
# Stop and target of a signal, in ATRs of its 1h bars from the entry; how many 1h bars it holds.
SIGNAL_STOP_ATR = env.float("SIGNAL_STOP_ATR", default=1.5)
SIGNAL_TARGET_ATR = env.float("SIGNAL_TARGET_ATR", default=3.0)
SIGNAL_HORIZON_BARS = env.int("SIGNAL_HORIZON_BARS", default=24)
# The majors the market regime (risk_on / risk_off / neutral / high_volatility) is read from.
REGIME_MAJORS = env.list("REGIME_MAJORS", default=["BTC/USDT", "ETH/USDT"])
# A desk publishes a signal only at this confidence or more; it is killed (stops publishing
# until staff re-enable it) when its drawdown over its closed signals reaches this many percent.
DESK_MIN_CONFIDENCE = env.float("DESK_MIN_CONFIDENCE", default=0.5)
DESK_KILL_DRAWDOWN_PCT = env.float("DESK_KILL_DRAWDOWN_PCT", default=15.0)
# /api/mcp/strategies lists a desk as live once it closed this many signals in 30 days with a
# positive expectancy (and is not killed); scout before that.
DESK_LIVE_MIN_SIGNALS = env.int("DESK_LIVE_MIN_SIGNALS", default=10)
# The analytics pass (catalog/editorial/intel.py: regime, signals closed and published, intel snapshot).
INTEL_COMPUTE_SECONDS = env.float("INTEL_COMPUTE_SECONDS", default=300.0)
# intel/latest refuses (503, uncharged) a newest snapshot older than this.
INTEL_MAX_AGE_SECONDS = env.int("INTEL_MAX_AGE_SECONDS", default=1800)
INTEL_RETENTION_DAYS = env.int("INTEL_RETENTION_DAYS", default=30)
# Copy signals: the free tier of /api/a2a/signals/copy-trade sees signals opened at least this
# long ago, routing masked; the size of a copied order risks this percent of equity between
# entry and stop, at most this fraction of equity (1: no leverage).
COPY_FREE_DELAY_SECONDS = env.int("COPY_FREE_DELAY_SECONDS", default=600)
COPY_RISK_PER_TRADE_PCT = env.float("COPY_RISK_PER_TRADE_PCT", default=1.0)
COPY_MAX_POSITION_FRACTION = env.float("COPY_MAX_POSITION_FRACTION", default=1.0)
# Alert thresholds: a cross-venue spread (net of taker fees for the exchanges feed's readings;
# an alert when a venue pair crosses it), a move of a prediction market's yes price.
PAIR_ARB_ALERT_BPS = env.float("PAIR_ARB_ALERT_BPS", default=25.0)
# Federated partner signals older than this are not resold (catalog/products/federation.py).
FEDERATION_SIGNAL_MAX_AGE_HOURS = env.float("FEDERATION_SIGNAL_MAX_AGE_HOURS", default=24.0)
PREDICTION_ALERT_MOVE = env.float("PREDICTION_ALERT_MOVE", default=0.05)

# --- desks (catalog/analytics/desks.py; the other thresholds are constants there) -----------
# A grid step is at least this many round-trip taker fees (2 = half of each step pays fees).
GRID_FEE_MULTIPLE = env.float("GRID_FEE_MULTIPLE", default=2.0)
# The scalp desk's pairs trade at least this much a day (USD) on their deepest venue.
SCALP_MIN_VOLUME_USD = env.float("SCALP_MIN_VOLUME_USD", default=1_000_000.0)
# A scalp is skipped when crossing the spread costs more than this share of its target distance.
SCALP_MAX_SPREAD_SHARE = env.float("SCALP_MAX_SPREAD_SHARE", default=0.25)
# The macro gate (/risk/macro-gate, the decision pack's macro check, the morning brief) is
# closed within this many hours before or after a high-impact calendar event.
MACRO_GATE_HOURS = env.float("MACRO_GATE_HOURS", default=4.0)

# --- morning brief (catalog/editorial/briefs.py): composed by beat every day at this UTC hour, published
# after the delay (staff's time to review or replace it in the admin; 0: at once).
MORNING_BRIEF_HOUR_UTC = env.int("MORNING_BRIEF_HOUR_UTC", default=6)
MORNING_BRIEF_PUBLISH_DELAY_MINUTES = env.float("MORNING_BRIEF_PUBLISH_DELAY_MINUTES", default=0.0)
