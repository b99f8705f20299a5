"""The parse stage (pure, runs in worker processes): link extraction, base href, meta
robots and X-Robots-Tag, meta refresh, charset."""
