from __future__ import annotations

from .books import OrderBook
from .calendar import CalendarEvent
from .chain import GasFeeBlock
from .content import AgentFrameworkPack, CatalogAgent, EditorialPiece, Integration, PartnerAgent, Teaser
from .desks import DeskState, IntelSnapshot
from .equity import EquityQuote
from .exchanges import Candle, FundingRate
from .federation import PartnerSignal
from .feeds import (
    DeskSignal,
    ExchangeMarket,
    RegimeSnapshot,
    RpcEndpoint,
    RpcProbe,
    SpreadSnapshot,
    TelemetryNode,
    TokenizedAsset,
    TradingModule,
)
from .feedstate import FeedState
from .grants import GrantFeed, GrantProgram
from .news import NewsItem
from .ops import DailyCounter, WorkerHeartbeat
from .prediction import PredictionMarket, PredictionPrice
from .sku import Sku
from .yields import YieldPool

__all__ = [
    "AgentFrameworkPack",
    "CalendarEvent",
    "Candle",
    "CatalogAgent",
    "DailyCounter",
    "DeskSignal",
    "DeskState",
    "EditorialPiece",
    "EquityQuote",
    "ExchangeMarket",
    "FeedState",
    "FundingRate",
    "GasFeeBlock",
    "GrantFeed",
    "GrantProgram",
    "IntelSnapshot",
    "Integration",
    "NewsItem",
    "OrderBook",
    "PartnerAgent",
    "PartnerSignal",
    "PredictionMarket",
    "PredictionPrice",
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
    "YieldPool",
]

# Cross-venue prediction matching (issue 13, predmatch).
from .prediction_match import PredictionMatch  # noqa: E402

__all__ += ["PredictionMatch"]
