from __future__ import annotations

import pytest
from django.db import connection
from rest_framework.test import APIClient


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """Seed the catalog once per test database; tests roll back their own changes."""
    from catalog.services import catalog_seed

    with django_db_blocker.unblock():
        catalog_seed()


@pytest.fixture
def api() -> APIClient:
    return APIClient()


def is_postgres() -> bool:
    return connection.vendor == "postgresql"


def pytest_collection_modifyitems(config, items):
    from django.conf import settings

    engine = settings.DATABASES["default"]["ENGINE"]
    skip = pytest.mark.skip(
        reason="needs PostgreSQL (row locks, concurrent transactions, a database shared with other processes); "
        "SQLite runs them in one in-memory connection. CI sets DATABASE_URL to PostgreSQL."
    )
    for item in items:
        if "postgres" in item.keywords and engine != "django.db.backends.postgresql":
            item.add_marker(skip)
