"""Evidence and reports: summary figures, season tables, charts, export and verify."""
