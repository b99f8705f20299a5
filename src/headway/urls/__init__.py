"""URL rules (pure): canonicalization, scope and opt-out, registered domains, SURT keys,
URL fingerprints. Used at admission and inside parser processes."""
