"""The domain: records, vocabularies, grounds, clock, ledger rules, cadence. No I/O."""
