"""Writes the replay samples of the exchange feed (catalog/feeds/samples/exchange_<id>/), a
developer's tool: `python -m a2a_service.scripts.samples` (no settings, no database: of the
service it reads only where the samples live, catalog.feeds.replay.SAMPLES).

Each file is a venue's REST answer in that venue's own format (the shapes of its API docs and
of ccxt's parsers), at the path catalog.feeds.exchanges.client.sample_path gives for the URL
ccxt requests. The values are synthetic but consistent: one price per base, 300 1h and 300 1m
candles per market following a designed shape (SHAPES: up-trends, down-trends, bands, one
volatile market; the same path on every venue, ending at each venue's ticker price; the 1m bars
run through the newest 1h closes), bid/ask around the price, a funding rate per perpetual.
The shapes are what the local stack's signals and regimes show. Nothing here is imported by
the service.

Modules: market (prices, venues, each venue's synthetic book and candles), paths (the designed
candle paths), binance, okx and bybit (each venue's answers), books (the order books)."""
