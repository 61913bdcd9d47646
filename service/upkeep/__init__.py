"""Upkeep: the lifecycle sweep (packing, abandoning) and the archive's export and import."""
