"""Reusable widgets (tables, sparklines, charts, cards): never screens, no tool named."""
