"""Payment rails: how a paid call is held, committed or released (see base.py)."""
