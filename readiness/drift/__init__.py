"""Drift: source keys that appeared in an environment's pushes after its mapping version was published, and that no
rule of that version uses. Computed live for the partner pages (`selectors.py`), counted and stored for the partner
list (`services.py`, refreshed by `readiness.tasks`)."""
