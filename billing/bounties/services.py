"""Bounty writes: claim, submit, accept (pays the reward once), reject."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from pydantic import BaseModel, ValidationError

from a2a_service.core.errors import Conflict, NotFound, RequestValidationError
from billing.bounties.checks import check_submission
from billing.bounties.models import Bounty, BountyClaim
from billing.credits import credit_add
from billing.models import Account, LedgerEntry
from catalog.api.bodies import (
    FillReportSubmission,
    OtherSubmission,
    ResolutionMismatchSubmission,
    SpreadSnapshotIngest,
)

logger = logging.getLogger(__name__)

SUBMISSION_MODELS: dict[str, type[BaseModel]] = {
    Bounty.Kind.SPREAD_SNAPSHOT: SpreadSnapshotIngest,
    Bounty.Kind.FILL_REPORT: FillReportSubmission,
    Bounty.Kind.RESOLUTION_MISMATCH: ResolutionMismatchSubmission,
    Bounty.Kind.OTHER: OtherSubmission,
}


class BountyClosed(Conflict):
    code = "bounty_closed"


class ClaimNotPending(Conflict):
    """The claim is not in the state this step needs (e.g. accepted twice, submitted twice)."""

    code = "claim_state"


class BountyFull(Conflict):
    code = "bounty_full"


class ItemAlreadyRewarded(Conflict):
    """Another claim of this bounty was rewarded for the same item (award_key)."""

    code = "bounty_item_rewarded"


def _match_key(submission: dict[str, Any]) -> str | None:
    match_id = submission.get("match_id")
    return f"match:{match_id}" if isinstance(match_id, int) else None


# Bounty kinds that pay once per item, and the item a submission names: one accepted claim per
# (bounty, item) is a unique constraint (BountyClaim.award_key), not a read before the accept.
AWARD_ITEM: dict[str, Callable[[dict[str, Any]], str | None]] = {
    Bounty.Kind.RESOLUTION_MISMATCH: _match_key,
}


def award_key(kind: str, submission: Any) -> str | None:
    key_of = AWARD_ITEM.get(kind)
    return key_of(submission) if key_of is not None and isinstance(submission, dict) else None


def _open_bounty(bounty_id: int) -> Bounty:
    bounty = Bounty.objects.filter(pk=bounty_id).first()
    if bounty is None:
        raise NotFound(f"no bounty {bounty_id}")
    if not bounty.is_open_at(timezone.now()):
        raise BountyClosed(
            f"bounty {bounty_id} is not open (closed, not started, expired, or every reward awarded)",
            extra={"bounty_id": bounty_id},
        )
    return bounty


def bounty_claim(*, bounty_id: int, account: Account) -> tuple[BountyClaim, bool]:
    """The account's claim on an open bounty (created, or the one it has: claiming is idempotent).
    A claim reserves nothing: rewards go to the first accepted submissions."""
    existing = BountyClaim.objects.filter(bounty_id=bounty_id, account=account).first()
    if existing is not None:
        return existing, False
    bounty = _open_bounty(bounty_id)
    try:
        with transaction.atomic():
            return BountyClaim.objects.create(bounty=bounty, account=account), True
    except IntegrityError:  # the same account claimed it concurrently
        return BountyClaim.objects.get(bounty=bounty, account=account), False


def bounty_submit(*, bounty_id: int, account: Account, data: Any) -> BountyClaim:
    """Store the submission of a claimed bounty (once), then run the bounty's automatic check
    if it has one: accepted pays the reward, rejected is final, undecided waits for staff."""
    claim = BountyClaim.objects.filter(bounty_id=bounty_id, account=account).select_related("bounty").first()
    if claim is None:
        if not Bounty.objects.filter(pk=bounty_id).exists():
            raise NotFound(f"no bounty {bounty_id}")
        raise ClaimNotPending(
            f"claim bounty {bounty_id} first: POST /api/a2a/bounties/{bounty_id}/claim",
            extra={"status": None},
        )
    bounty = claim.bounty
    model = SUBMISSION_MODELS[bounty.kind]
    if not isinstance(data, dict):
        raise RequestValidationError.single(
            ["body"], "request body must be a JSON object", "model_attributes_type"
        )
    try:
        submission = model.model_validate(data)
    except ValidationError as exc:
        raise RequestValidationError.from_pydantic(exc, "body") from exc
    if claim.status != BountyClaim.Status.CLAIMED:
        raise ClaimNotPending(
            f"this claim is {claim.status}: a bounty takes one submission", extra={"status": claim.status}
        )
    _open_bounty(bounty_id)
    # Conditional: of two concurrent submissions of one claim, one is stored.
    stored = BountyClaim.objects.filter(pk=claim.pk, status=BountyClaim.Status.CLAIMED).update(
        status=BountyClaim.Status.SUBMITTED,
        submission=submission.model_dump(mode="json"),
        submitted_at=timezone.now(),
    )
    if not stored:
        claim.refresh_from_db()
        raise ClaimNotPending(
            f"this claim is {claim.status}: a bounty takes one submission", extra={"status": claim.status}
        )
    if bounty.auto_check:
        verdict = check_submission(bounty, submission, claim_id=claim.pk)
        reason = f"automatic check: {verdict.reason}"
        if verdict.decision == "accept":
            try:
                claim_accept(claim_id=claim.pk, reason=reason)
            except BountyFull:
                claim_reject(
                    claim_id=claim.pk,
                    reason=f"automatic check: every reward of bounty {bounty.id} was awarded",
                )
            except ItemAlreadyRewarded as exc:
                claim_reject(claim_id=claim.pk, reason=f"automatic check: {exc.detail}")
        elif verdict.decision == "reject":
            claim_reject(claim_id=claim.pk, reason=reason)
        else:
            BountyClaim.objects.filter(pk=claim.pk).update(decision=reason[:500])
    claim.refresh_from_db()
    return claim


def claim_accept(*, claim_id: int, staff_id: int | None = None, reason: str = "") -> BountyClaim:
    """Accept a submitted claim and pay its reward: one ledger row, exactly once. The claim's
    conditional update (submitted -> accepted) lets one of two accepts through; the same update
    writes the item it is rewarded for (award_key, unique per bounty), so of several claims of
    one item one is accepted (the others: ItemAlreadyRewarded); the bounty's (awarded_count <
    max_awards) lets at most max_awards claims through, whatever runs concurrently; the credit
    and its ledger row commit with all three, or nothing does."""
    found = BountyClaim.objects.filter(pk=claim_id).values_list("bounty__kind", "submission").first()
    if found is None:
        raise NotFound(f"no bounty claim {claim_id}")
    key = award_key(*found)
    try:
        return _claim_accept(claim_id=claim_id, staff_id=staff_id, reason=reason, key=key)
    except IntegrityError:
        # The unique (bounty, award_key): a concurrent accept of the same item committed first
        # (on PostgreSQL this update waited for it). Nothing of this one was written.
        if key is None:
            raise
        raise ItemAlreadyRewarded(
            f"{key.replace(':', ' ')} was already rewarded by this bounty: nothing paid",
            extra={"award_key": key},
        ) from None


def _claim_accept(*, claim_id: int, staff_id: int | None, reason: str, key: str | None) -> BountyClaim:
    with transaction.atomic():
        now = timezone.now()
        taken = BountyClaim.objects.filter(pk=claim_id, status=BountyClaim.Status.SUBMITTED).update(
            status=BountyClaim.Status.ACCEPTED,
            decided_by_id=staff_id,
            decided_at=now,
            decision=reason[:500],
            award_key=key,
        )
        claim = BountyClaim.objects.select_related("bounty").get(pk=claim_id)
        if not taken:
            raise ClaimNotPending(
                f"claim {claim_id} is {claim.status}, not submitted: nothing paid",
                extra={"status": claim.status},
            )
        bounty = claim.bounty
        slot = Bounty.objects.filter(pk=bounty.pk, awarded_count__lt=F("max_awards")).update(
            awarded_count=F("awarded_count") + 1
        )
        if not slot:
            raise BountyFull(
                f"every reward of bounty {bounty.pk} ({bounty.max_awards}) was awarded: nothing paid"
            )
        Bounty.objects.filter(pk=bounty.pk, awarded_count__gte=F("max_awards")).update(
            status=Bounty.Status.CLOSED
        )
        entry = credit_add(
            account_id=claim.account_id,
            amount_atomic=bounty.reward_atomic,
            kind=LedgerEntry.Kind.BOUNTY_REWARD,
            reference=f"bounty {bounty.pk} claim {claim.pk}",
            staff_id=staff_id,
            reason=f"bounty reward: {bounty.title}"[:300],
        )
        BountyClaim.objects.filter(pk=claim.pk).update(reward_entry=entry)
    claim.refresh_from_db()
    return claim


def claim_reject(*, claim_id: int, staff_id: int | None = None, reason: str = "") -> BountyClaim:
    """Reject a claim not decided yet (claimed or submitted); a decided claim stays as it is."""
    done = BountyClaim.objects.filter(
        pk=claim_id, status__in=[BountyClaim.Status.CLAIMED, BountyClaim.Status.SUBMITTED]
    ).update(
        status=BountyClaim.Status.REJECTED,
        decided_by_id=staff_id,
        decided_at=timezone.now(),
        decision=reason[:500],
    )
    claim = BountyClaim.objects.get(pk=claim_id)
    if not done:
        raise ClaimNotPending(
            f"claim {claim_id} is {claim.status}: not changed", extra={"status": claim.status}
        )
    return claim
