"""Headless subcommands. Each module has ``add_arguments(parser)`` and ``run(args) -> int``.
None of them imports textual."""
