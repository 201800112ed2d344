from __future__ import annotations

from .content import AgentFrameworkPack, CatalogAgent, EditorialPiece, Integration, PartnerAgent, Teaser
from .exchanges import Candle, FundingRate
from .feeds import (
    DeskSignal,
    ExchangeMarket,
    PredictionMarket,
    RegimeSnapshot,
    RpcEndpoint,
    RpcProbe,
    SpreadSnapshot,
    TelemetryNode,
    TokenizedAsset,
    TradingModule,
)
from .news import NewsItem
from .ops import DailyCounter, WorkerHeartbeat
from .sku import Sku

__all__ = [
    "AgentFrameworkPack",
    "Candle",
    "CatalogAgent",
    "DailyCounter",
    "DeskSignal",
    "EditorialPiece",
    "ExchangeMarket",
    "FundingRate",
    "Integration",
    "NewsItem",
    "PartnerAgent",
    "PredictionMarket",
    "RegimeSnapshot",
    "RpcEndpoint",
    "RpcProbe",
    "Sku",
    "SpreadSnapshot",
    "Teaser",
    "TelemetryNode",
    "TokenizedAsset",
    "TradingModule",
    "WorkerHeartbeat",
]
