"""The catalog: the market data the service ingests and everything sold from it, in layers that
import only downward (the import-linter contract in pyproject.toml holds them), from the top:

- api/, admin.py, tasks.py, management/, apps.py: the surfaces (routes, staff screens, Celery
  tasks, commands, the AppConfig that loads the products and the feed adapters);
- selectors/ (the free catalog's reads and their response shapes) and services.py (writes to
  the catalog's own rows: the seed, heartbeats, SKU status);
- seed/: what the catalog is seeded with;
- products/: the product registry, each product family, and the watch on their availability;
- editorial/: what the house writes itself (the analytics pass and its desks, their track
  record, the morning brief);
- feeds/: one adapter per outside source, writing the market data;
- analytics/: the maths over that data;
- signals.py (the Django signals a lower layer tells a higher one with) and counters.py;
- models/: the market data and the catalog's rows."""
