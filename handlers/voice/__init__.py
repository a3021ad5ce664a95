"""Voice notes: a spoken report transcribed into a guided form."""
