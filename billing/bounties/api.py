"""Claim and submit bounties (X-API-Key, free calls); the listing is the paid `bounties` product."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from pydantic import BaseModel, Field
from rest_framework.request import Request
from rest_framework.response import Response

from a2a_service.core.money import usdc_from_atomic
from a2a_service.core.schemas import ErrorOut, HTTPValidationError, UnauthorizedOut
from a2a_service.core.views import ApiView, ok
from billing.api.auth import api_key_account
from billing.api.views import API_KEY_HEADER
from billing.bounties.models import BountyClaim
from billing.bounties.services import bounty_claim, bounty_submit
from catalog.api.bodies import BountySubmitBody

TAG = "bounties"


class BountyClaimOut(BaseModel):
    id: int
    bounty_id: int
    bounty_title: str
    kind: str
    status: str = Field(description="claimed, submitted, accepted (reward paid) or rejected")
    submission: dict[str, Any] | None
    decision: str = Field(description="why it was accepted or rejected (automatic check or staff)")
    decided_at: datetime | None
    reward_atomic: int = Field(description="the bounty's reward, atomic USDC")
    reward_usdc: float
    reward_paid: bool
    ledger_entry_id: int | None = Field(description="the credit ledger row that paid the reward")
    claimed_at: datetime
    submitted_at: datetime | None


class BountyClaimsOut(BaseModel):
    claims: list[BountyClaimOut]
    count: int


def claim_out(claim: BountyClaim) -> BountyClaimOut:
    bounty = claim.bounty
    return BountyClaimOut(
        id=claim.pk,
        bounty_id=bounty.pk,
        bounty_title=bounty.title,
        kind=bounty.kind,
        status=claim.status,
        submission=claim.submission,
        decision=claim.decision,
        decided_at=claim.decided_at,
        reward_atomic=bounty.reward_atomic,
        reward_usdc=usdc_from_atomic(bounty.reward_atomic),
        reward_paid=claim.reward_entry_id is not None,
        ledger_entry_id=claim.reward_entry_id,
        claimed_at=claim.claimed_at,
        submitted_at=claim.submitted_at,
    )


COMMON = {
    401: UnauthorizedOut,
    404: ErrorOut,
    409: OpenApiResponse(ErrorOut, description="not open, or wrong state"),
}


class BountyClaimView(ApiView):
    @extend_schema(
        tags=[TAG],
        summary="Claim a bounty (free)",
        description="Claims an open bounty for your account: 201 the first time, 200 with the same claim after. "
        "A claim reserves nothing: rewards go to the first accepted submissions. 409 bounty_closed when the "
        "bounty is closed, expired or every reward was awarded.",
        operation_id="bounty_claim",
        parameters=[API_KEY_HEADER],
        request=None,
        responses={201: BountyClaimOut, 200: BountyClaimOut, **COMMON},
    )
    def post(self, request: Request, bounty_id: int) -> Response:
        account = api_key_account(request)
        claim, created = bounty_claim(bounty_id=bounty_id, account=account)
        return ok(claim_out(claim), status=201 if created else 200)


class BountySubmitView(ApiView):
    @extend_schema(
        tags=[TAG],
        summary="Submit a claimed bounty (free)",
        description="The body is the submission in the shape of the bounty's kind (see the listing's "
        "`submission_shape`): spread_snapshot -> SpreadSnapshotIngest, fill_report -> FillReportSubmission, "
        "resolution_mismatch -> ResolutionMismatchSubmission, other -> OtherSubmission. One submission per "
        "claim. Where the bounty has auto_check, the answer already says accepted (the reward is credited: "
        "ledger_entry_id) or rejected (decision says why); otherwise it stays submitted until staff decide.",
        operation_id="bounty_submit",
        parameters=[API_KEY_HEADER],
        request=BountySubmitBody,
        responses={200: BountyClaimOut, 422: HTTPValidationError, **COMMON},
    )
    def post(self, request: Request, bounty_id: int) -> Response:
        account = api_key_account(request)
        claim = bounty_submit(bounty_id=bounty_id, account=account, data=request.data)
        return ok(claim_out(claim))


class BountiesMineView(ApiView):
    @extend_schema(
        tags=[TAG],
        summary="Your bounty claims (free)",
        operation_id="bounties_mine",
        parameters=[API_KEY_HEADER],
        responses={200: BountyClaimsOut, 401: UnauthorizedOut},
    )
    def get(self, request: Request) -> Response:
        account = api_key_account(request)
        claims = list(BountyClaim.objects.filter(account=account).select_related("bounty")[:200])
        return ok(BountyClaimsOut(claims=[claim_out(c) for c in claims], count=len(claims)))
