"""Tally's local-stack launcher (in the spirit of Cassandra's ccm)."""
