"""Reading and writing text safely: output bytes into lines, bounded file reads, strict JSON."""
