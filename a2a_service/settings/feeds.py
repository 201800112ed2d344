"""Settings of the feeds (imported by base): how a pass fetches, the runner and retention, and
each source: news and its sentiment, exchanges, calendars, equities, prediction venues and DeFi
yields, the chain's fees and the RPC probes, cross-venue prediction matching."""

from __future__ import annotations

from .environment import env

# Feeds (catalog/feeds/): how a pass fetches. FEEDS_MODE: live (production), replay (the local
# replay server's recorded samples) or auto (live, and replay for a source it cannot reach).
FEEDS_MODE = env.str("FEEDS_MODE", default="live")
FEEDS_REPLAY_URL = env.str("FEEDS_REPLAY_URL", default="http://127.0.0.1:8765")
FEEDS_USER_AGENT = env.str("FEEDS_USER_AGENT", default="a2a-market-intel/1.0 (+feeds)")
FEEDS_HTTP_TIMEOUT_SECONDS = env.float("FEEDS_HTTP_TIMEOUT_SECONDS", default=10.0)
FEEDS_HTTP_DEADLINE_SECONDS = env.float("FEEDS_HTTP_DEADLINE_SECONDS", default=30.0)
FEEDS_MAX_BODY_BYTES = env.int("FEEDS_MAX_BODY_BYTES", default=8 * 1024 * 1024)
# --- feed runner, schedule and retention (catalog/feeds/runner.py, retention.py) -------------
# A pass whose lock (FeedState.running_since) is older than this belongs to a dead process.
FEEDS_LOCK_STALE_SECONDS = env.int("FEEDS_LOCK_STALE_SECONDS", default=900)
# A failing source waits base * 2^(failures-1) seconds before its next scheduled pass, at most max.
FEEDS_BACKOFF_BASE_SECONDS = env.int("FEEDS_BACKOFF_BASE_SECONDS", default=60)
FEEDS_BACKOFF_MAX_SECONDS = env.int("FEEDS_BACKOFF_MAX_SECONDS", default=3600)
# Pruning of high-volume feed tables (news is sold and never pruned).
FEEDS_PRUNE_SECONDS = env.float("FEEDS_PRUNE_SECONDS", default=3600.0)
FEEDS_RETENTION_PROBES_DAYS = env.int("FEEDS_RETENTION_PROBES_DAYS", default=14)
FEEDS_RETENTION_SPREADS_DAYS = env.int("FEEDS_RETENTION_SPREADS_DAYS", default=30)
# A prediction market's yes-price history (one row per pass where the price moved).
FEEDS_RETENTION_PREDICTION_PRICES_DAYS = env.int("FEEDS_RETENTION_PREDICTION_PRICES_DAYS", default=90)
# Spread snapshots pushed by an internal collector (X-Ingest-Token; empty: the endpoint refuses all).
INGEST_TOKEN = env("INGEST_TOKEN", default="")
# News (catalog/feeds/news/): comma-separated `category|url[|source name]` (category crypto,
# equity or general; the name recorded as the items' source, default the URL's host).
NEWS_FEEDS = env.str(
    "NEWS_FEEDS",
    default=",".join(
        [
            "crypto|https://www.coindesk.com/arc/outboundfeeds/rss/|CoinDesk",
            "crypto|https://cointelegraph.com/rss|Cointelegraph",
            "equity|https://feeds.content.dowjones.io/public/rss/mw_topstories|MarketWatch",
            "general|https://www.sec.gov/news/pressreleases.rss|SEC",
            "general|https://www.federalreserve.gov/feeds/press_all.xml|Federal Reserve",
        ]
    ),
)
# Unlock price of a new item by category, in USDC (staff may override an item in the admin).
NEWS_PRICE_EQUITY_USDC = env.str("NEWS_PRICE_EQUITY_USDC", default="0.18")
NEWS_PRICE_GENERAL_USDC = env.str("NEWS_PRICE_GENERAL_USDC", default="0.18")
NEWS_PRICE_CRYPTO_USDC = env.str("NEWS_PRICE_CRYPTO_USDC", default="0.1")
NEWS_TEASER_CHARS = env.int("NEWS_TEASER_CHARS", default=280)
NEWS_MAX_ITEMS_PER_FEED = env.int("NEWS_MAX_ITEMS_PER_FEED", default=100)
# Sentiment of the news (catalog/analytics/sentiment.py) and the products built on it
# (sentiment, equity_intel, equity_scalp). An item's weight halves every half-life.
SENTIMENT_HALF_LIFE_HOURS = env.float("SENTIMENT_HALF_LIFE_HOURS", default=12.0)
# Nothing newer than this about the assets asked for: 503, nothing charged (news flows around
# the clock; a day without any is a dead feed, not a quiet market).
SENTIMENT_MAX_AGE_HOURS = env.float("SENTIMENT_MAX_AGE_HOURS", default=24.0)
SENTIMENT_DRIVERS = env.int("SENTIMENT_DRIVERS", default=5)
# Equity news is thinner over a weekend than crypto news: a longer freshness limit.
EQUITY_NEWS_MAX_AGE_HOURS = env.float("EQUITY_NEWS_MAX_AGE_HOURS", default=72.0)
EQUITY_INTEL_HEADLINES = env.int("EQUITY_INTEL_HEADLINES", default=10)
# A catalyst (an earnings, guidance, M&A, rating, legal, product or macro headline) is fresh,
# and may make a scalp setup, for this long after its publication.
EQUITY_CATALYST_FRESH_HOURS = env.float("EQUITY_CATALYST_FRESH_HOURS", default=24.0)
# A quote older than this gives no price context to trade on (the last close stays the
# reference over a long weekend).
EQUITY_QUOTE_MAX_AGE_HOURS = env.float("EQUITY_QUOTE_MAX_AGE_HOURS", default=96.0)
# equity_scalp: stop and target at these fractions of the day's range from the entry.
EQUITY_SCALP_STOP_RANGE = env.float("EQUITY_SCALP_STOP_RANGE", default=0.5)
EQUITY_SCALP_TARGET_RANGE = env.float("EQUITY_SCALP_TARGET_RANGE", default=1.0)
EQUITY_SCALP_HORIZON_MINUTES = env.int("EQUITY_SCALP_HORIZON_MINUTES", default=240)

# Exchange feed (catalog/feeds/exchanges/, ccxt public endpoints, no keys). EXCHANGES: ccxt ids;
# MARKET_SYMBOLS: bases (quoted in USDT, else USD/USDC) or full ccxt symbols "BASE/QUOTE";
# EXCHANGE_API_BASES ("id=url,..."): replaces the scheme and host of every REST URL of that
# exchange (the path is kept), so a local server can stand in for the venue.
EXCHANGES = env.list("EXCHANGES", default=["binance", "okx", "bybit", "kraken", "coinbase"])
MARKET_SYMBOLS = env.list(
    "MARKET_SYMBOLS",
    default=[
        "BTC",
        "ETH",
        "SOL",
        "XRP",
        "BNB",
        "DOGE",
        "ADA",
        "AVAX",
        "LINK",
        "DOT",
        "LTC",
        "TRX",
        "TON",
        "SUI",
        "NEAR",
    ],
)
EXCHANGE_API_BASES = env.str("EXCHANGE_API_BASES", default="")
EXCHANGE_CANDLE_LIMITS = env.dict("EXCHANGE_CANDLE_LIMITS", default={"1m": "300", "1h": "300"})
# Order-book levels fetched per side for each spot market (0: no depth). Venues accept only
# some values (binance 5/10/20/50/100/...; okx up to 400; bybit spot up to 200).
EXCHANGE_BOOK_DEPTH = env.int("EXCHANGE_BOOK_DEPTH", default=20)
# Trading fees as fractions ("binance=0.001,okx=0.0008"): override a venue's public base-tier
# rate from ccxt's static exchange description (catalog/analytics/execution/fees.py).
# (A malformed rate fails at start-up rather than pricing with a wrong fee.)
EXCHANGE_TAKER_FEES = {k.strip(): float(v) for k, v in env.dict("EXCHANGE_TAKER_FEES", default={}).items()}
EXCHANGE_MAKER_FEES = {k.strip(): float(v) for k, v in env.dict("EXCHANGE_MAKER_FEES", default={}).items()}
# Tokenized assets priced from the exchanges' tickers: "SYMBOL|name|underlying,...".
TOKENIZED_WATCHLIST = env.list("TOKENIZED_WATCHLIST", default=["PAXG|PAX Gold|XAU", "XAUT|Tether Gold|XAU"])
# Calendar feed (catalog/feeds/calendar/): ICS calendars, comma-separated `name|url[|country]`
# (the name is the events' calendar and the replay sample's file name). Defaults: the release
# calendars the US statistical agencies publish as iCalendar: BLS (employment situation, CPI,
# PPI, JOLTS) and BEA (GDP, personal income and outlays/PCE, trade). Central banks (FOMC, ECB)
# publish their meeting dates as web pages, not ICS: staff add those in the admin (manual
# events) or list an ICS URL here. Events are kept from CALENDAR_PAST_DAYS before the pass to
# CALENDAR_HORIZON_DAYS after it.
CALENDAR_ICS_URLS = env.str(
    "CALENDAR_ICS_URLS",
    default=",".join(
        [
            "bls|https://www.bls.gov/schedule/news_release/bls.ics|US",
            "bea|https://www.bea.gov/news/schedule/ics/online-calendar-subscription.ics|US",
        ]
    ),
)
CALENDAR_PAST_DAYS = env.int("CALENDAR_PAST_DAYS", default=7)
CALENDAR_HORIZON_DAYS = env.int("CALENDAR_HORIZON_DAYS", default=60)
# Equities feed (catalog/feeds/equities/): Stooq's keyless CSV quotes. EQUITY_SYMBOLS: tickers
# (US listings; "SAP.DE" for another Stooq market); the tokenized watchlist's underlyings are
# added. EQUITY_QUOTES_TZ: the zone of Stooq's date/time columns (its site's clock, Poland).
EQUITY_QUOTES_URL = env.str("EQUITY_QUOTES_URL", default="https://stooq.com/q/l/")
EQUITY_SYMBOLS = env.list(
    "EQUITY_SYMBOLS",
    default=["SPY", "QQQ", "AAPL", "MSFT", "NVDA", "TSLA", "AMZN", "GOOGL", "META", "COIN", "MSTR"],
)
EQUITY_QUOTES_TZ = env.str("EQUITY_QUOTES_TZ", default="Europe/Warsaw")
# The tokenized premium products flag an underlying quote older than this (while its market is
# open; while it is closed, older than this before the last close).
TOKENIZED_UNDERLYING_MAX_AGE_MINUTES = env.int("TOKENIZED_UNDERLYING_MAX_AGE_MINUTES", default=30)
# Retention of candles and funding readings (the feeds' pruning schedule reads it).
EXCHANGE_RETENTION_DAYS = env.int("EXCHANGE_RETENTION_DAYS", default=14)

# --- feeds: prediction venues and DeFi yields (catalog/feeds/polymarket, kalshi, defillama) ---
# Keyless public APIs. Each pass is bounded: at most *_MAX_MARKETS markets per venue (fetched
# PREDICTION_PAGE_SIZE a page), at most POLYMARKET_MAX_MIDPOINTS CLOB look-ups for the markets
# Gamma gives no price, and the DefiLlama pools at or above the TVL floor, largest first, up to
# the cap. DEFILLAMA_YIELDS_URL is the full URL of the pools list (~15 MB live, hence its own
# body limit).
POLYMARKET_GAMMA_URL = env.str("POLYMARKET_GAMMA_URL", default="https://gamma-api.polymarket.com")
POLYMARKET_CLOB_URL = env.str("POLYMARKET_CLOB_URL", default="https://clob.polymarket.com")
POLYMARKET_MAX_MARKETS = env.int("POLYMARKET_MAX_MARKETS", default=500)
POLYMARKET_MAX_MIDPOINTS = env.int("POLYMARKET_MAX_MIDPOINTS", default=50)
KALSHI_API_URL = env.str("KALSHI_API_URL", default="https://api.elections.kalshi.com/trade-api/v2")
KALSHI_MAX_MARKETS = env.int("KALSHI_MAX_MARKETS", default=500)
PREDICTION_PAGE_SIZE = env.int("PREDICTION_PAGE_SIZE", default=100)
DEFILLAMA_YIELDS_URL = env.str("DEFILLAMA_YIELDS_URL", default="https://yields.llama.fi/pools")
DEFILLAMA_MIN_TVL_USD = env.float("DEFILLAMA_MIN_TVL_USD", default=1_000_000.0)
DEFILLAMA_MAX_POOLS = env.int("DEFILLAMA_MAX_POOLS", default=500)
DEFILLAMA_MAX_BODY_BYTES = env.int("DEFILLAMA_MAX_BODY_BYTES", default=64 * 1024 * 1024)

# --- feeds: the chain's fee history and the RPC probes (catalog/feeds/chain, rpcprobe) --------
# The chain feed reads eth_feeHistory of CHAIN_RPC_URL over this many newest blocks, with the
# reward percentiles 10/25/50/70/90/99; each block's row is kept CHAIN_FEE_RETENTION_DAYS.
CHAIN_FEE_HISTORY_BLOCKS = env.int("CHAIN_FEE_HISTORY_BLOCKS", default=20)
CHAIN_FEE_RETENTION_DAYS = env.int("CHAIN_FEE_RETENTION_DAYS", default=7)
# The chain's EIP-1559 parameters for projecting the next block's base fee: EIP-1559's own
# (elasticity 2, change denominator 8) are Ethereum's and anvil's; OP-stack chains such as Base
# use their own (Base: 6 and 250).
CHAIN_EIP1559_ELASTICITY = env.int("CHAIN_EIP1559_ELASTICITY", default=2)
CHAIN_EIP1559_DENOMINATOR = env.int("CHAIN_EIP1559_DENOMINATOR", default=8)
# Endpoints the RPC probe feed measures: comma-separated `name|url` or `name|url|region|country`
# (plus the enabled endpoints staff add in the admin). Defaults: public Base mainnet endpoints.
RPC_PROBE_URLS = env.str(
    "RPC_PROBE_URLS",
    default=",".join(
        [
            "base-official|https://mainnet.base.org",
            "publicnode|https://base-rpc.publicnode.com",
            "llamarpc|https://base.llamarpc.com",
            "1rpc|https://1rpc.io/base",
            "drpc|https://base.drpc.org",
        ]
    ),
)
# `name` or `name|region|country`: the service's own chain node (CHAIN_RPC_URL) is probed too,
# under that name; empty: not probed. `make run` sets local-anvil for its local chain.
RPC_PROBE_OWN_CHAIN = env.str("RPC_PROBE_OWN_CHAIN", default="")
# Each JSON-RPC call of a probe gives up after this long (connect, read and the whole exchange).
RPC_PROBE_TIMEOUT_SECONDS = env.float("RPC_PROBE_TIMEOUT_SECONDS", default=5.0)
# Endpoints probed at once (each probe is a few sequential calls).
RPC_PROBE_CONCURRENCY = env.int("RPC_PROBE_CONCURRENCY", default=8)

# --- cross-venue prediction matching and divergence (catalog/analytics/prediction_match.py) --
# A computed pair at or above this confidence is a match (sold, alerted); below it (a near miss:
# similar wording, another threshold or date) it is kept for staff to confirm or reject.
PREDICTION_MATCH_MIN_CONFIDENCE = env.float("PREDICTION_MATCH_MIN_CONFIDENCE", default=0.6)
# Close times further apart than this are flagged as a rules mismatch and lower the confidence.
PREDICTION_MATCH_CLOSE_HOURS = env.float("PREDICTION_MATCH_CLOSE_HOURS", default=48.0)
# Trading fee per contract = rate x P x (1 - P) (Kalshi's published taker formula, 0.07; before
# its round-up to the cent). Polymarket charges no trading fee on most markets: 0.
PREDICTION_FEE_KALSHI = env.float("PREDICTION_FEE_KALSHI", default=0.07)
PREDICTION_FEE_POLYMARKET = env.float("PREDICTION_FEE_POLYMARKET", default=0.0)
