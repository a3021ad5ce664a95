"""Police: arrests, ejections, bans and the police log."""
