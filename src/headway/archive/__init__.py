"""Handing a crawl over: ``headway export --wacz`` packages the crawl directories of one
crawl (its nodes' WARC files, indexes and crawl logs) as one WACZ file. Reads crawl
directories, never changes them."""
