"""Market maths computed from the ingested feeds: price series from stored candles
(series.py), indicators through talipp (indicators.py), the regime classifier (regime.py) and
the provenance every computed payload carries (provenance.py). Products (catalog/products/)
read these; nothing here writes or knows about payment."""
