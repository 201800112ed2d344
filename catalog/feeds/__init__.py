"""Feed ingestion: one adapter package per outside source (catalog/feeds/<source>/), each
registering a FeedSource (catalog/feeds/registry.py) that the runner schedules. Importing this
package registers every adapter (catalog's AppConfig.ready imports it)."""

from catalog.feeds import news  # noqa: F401
