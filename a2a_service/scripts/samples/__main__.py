"""`python -m a2a_service.scripts.samples`: see a2a_service/scripts/samples/__init__.py."""

from __future__ import annotations

import shutil

from a2a_service.scripts.samples.binance import binance
from a2a_service.scripts.samples.books import books
from a2a_service.scripts.samples.bybit import bybit
from a2a_service.scripts.samples.market import SPOT
from a2a_service.scripts.samples.okx import okx
from catalog.feeds.replay import SAMPLES


def main() -> None:
    for venue in SPOT:
        shutil.rmtree(SAMPLES / f"exchange_{venue}", ignore_errors=True)
    binance()
    okx()
    bybit()
    for venue in SPOT:
        books(venue)


if __name__ == "__main__":
    main()
