"""Helpers the tests share (fixtures and builders); rigs/ holds what benchmarks use too."""
