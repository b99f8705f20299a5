"""headway: a polite, fast, crash-safe web crawler writing WARC/1.1."""

__version__ = "0.1.0"

#: Version of the on-disk layout of a crawl directory. A crawl directory whose
#: recorded format differs is refused instead of being misread, except the formats in
#: ``UPGRADABLE_CRAWL_FORMATS``, which are upgraded in place when opened.
CRAWL_FORMAT_VERSION = 2
UPGRADABLE_CRAWL_FORMATS = (1,)
