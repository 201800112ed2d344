"""Feed ingestion: one adapter package per outside source (catalog/feeds/<source>/), each
registering a FeedSource (catalog/feeds/registry.py) that the runner schedules.

The adapters are imported by `adapters_load()` (catalog's AppConfig.ready calls it), not when
this package is imported: the replay server (catalog/feeds/replay.py) runs without Django."""


def adapters_load() -> None:
    """Import every adapter package; each registers its FeedSource once."""
    from catalog.feeds import (  # noqa: F401
        calendar,
        chain,
        defillama,
        equities,
        exchanges,
        federation,
        grants,
        kalshi,
        news,
        polymarket,
        rpcprobe,
    )
