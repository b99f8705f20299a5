"""The fetch stage: HTTP client, resolver with overrides and DNS cache, address guard,
size and decompression limits."""
