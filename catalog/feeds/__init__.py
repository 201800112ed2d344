"""Feed ingestion: one adapter package per outside source (catalog/feeds/<source>/), each
registering a FeedSource (catalog/feeds/registry.py) that the runner schedules."""
