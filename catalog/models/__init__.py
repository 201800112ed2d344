from __future__ import annotations

from .content import AgentFrameworkPack, CatalogAgent, EditorialPiece, Integration, PartnerAgent, Teaser
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
from .feedstate import FeedState
from .news import NewsItem
from .ops import DailyCounter, WorkerHeartbeat
from .sku import Sku

__all__ = [
    "AgentFrameworkPack",
    "CatalogAgent",
    "DailyCounter",
    "DeskSignal",
    "EditorialPiece",
    "ExchangeMarket",
    "FeedState",
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
