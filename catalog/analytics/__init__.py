"""Market maths computed from the ingested feeds: price series from stored candles
(series.py), indicators through talipp (indicators.py), the regime classifier (regime.py), the
execution maths over the books (execution/) and the provenance every computed payload carries
(provenance.py). The feeds (at ingestion), the house's writing (catalog/editorial/) and the
products read these; nothing here imports them, nor knows about payment."""
