"""The store stage: WARC/1.1 writer with revisit records, CDXJ index, crawl log."""
