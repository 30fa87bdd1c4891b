"""CLI subcommands, one module per job (see :mod:`trustlab.cli`)."""
