"""Push diagnostics (CONTRACT §15): a partner reads its own raw pushes and what each one's normalization made of it."""
