"""Textual only. The UI knows tools through their Config, Samples and results."""
