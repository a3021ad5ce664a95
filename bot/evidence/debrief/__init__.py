"""The debrief pack for the FA, the police and the Safety Advisory Group: one PDF, CSVs and
a signed manifest (issue 25 §4)."""
