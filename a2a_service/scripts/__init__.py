"""Operators' scripts run with `python -m a2a_service.scripts.<name>`."""
