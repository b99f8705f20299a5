"""The frontier stage: the durable store of queued, in-flight and seen URLs, per-host
queues, leases and budgets, behind the ``FrontierStore`` protocol."""
