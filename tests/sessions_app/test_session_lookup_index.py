"""A wallet's sessions are found by an index, not by reading every session: the rail's
`buyer__iexact` lookup and the sign-in fast path's SQL (UPPER(buyer)) both match the expression
index session_buyer_upper_expires (PostgreSQL; SQLite has no such plan to check)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.utils import timezone

from sessions_app.models import PrepaidSession
from sessions_app.rail import session_owned_sql

pytestmark = pytest.mark.django_db

INDEX = "session_buyer_upper_expires"


@pytest.fixture
def postgres_plans():
    if connection.vendor != "postgresql":
        pytest.skip("query plans are PostgreSQL's")
    with connection.cursor() as cursor:
        # On a table this small a scan would be cheaper: ask whether the index can serve at all.
        cursor.execute("SET LOCAL enable_seqscan = off")
    yield


def test_the_rail_and_the_sign_in_check_find_a_wallets_sessions_by_index(postgres_plans):
    plan = PrepaidSession.objects.filter(buyer__iexact="0xAbC", expires_at__gt=timezone.now()).explain()
    assert INDEX in plan, plan
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN SELECT " + session_owned_sql(), {"wallet": "0xAbC", "sku": "m2m_session_desk"})
        owned_plan = "\n".join(row[0] for row in cursor.fetchall())
    assert INDEX in owned_plan, owned_plan
