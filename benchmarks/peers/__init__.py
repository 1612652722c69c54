"""Peers: other libraries' training on Trap Y, run for a CPU budget to be measured against the
toolkit's own at equal CPU time."""
