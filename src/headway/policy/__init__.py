"""Crawl policy (pure): politeness and adaptive per-host limits, robots.txt rules and
fetch semantics, retry decisions, priority. Functions take ``now``; nothing here sleeps
or does IO."""
