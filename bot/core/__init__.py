"""The command core: Command and Reply, the registry, roles, dispatch to handlers."""
