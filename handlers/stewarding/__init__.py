"""Stewarding: deployment, roll call, check-in, tabards, broadcasts and procedures, their
reach and chasers, missing persons."""
