"""The headless core: readers, math, processes and the store. Never imports textual."""
