"""Test support shared across the suite: fakes behind real interfaces and a served daemon.

Importable as `support` because pyproject sets pytest's `pythonpath = ["tests"]`.
"""
