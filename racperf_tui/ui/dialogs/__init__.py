"""Modal questions: the typed override of a refused device, an unknown host key, quitting."""
