"""Clubs as tenants of one deployment: registering them and checking their secrets."""
