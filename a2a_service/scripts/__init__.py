"""Operator scripts run as `python -m a2a_service.scripts.<name>` (outside the app layers)."""
