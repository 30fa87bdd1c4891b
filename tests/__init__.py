"""trustlab test suite: one package mirroring trustlab/; shared slow references live in tests.reference."""
