"""Reads served by PostgreSQL streaming replicas (CONTRACT §21): which reads go there (routing.py), which replicas
may serve now (health.py), and a caller's own writes read back from the primary (sticky.py)."""
