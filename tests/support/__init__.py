"""What only the tests (and the benchmarks run from a checkout) use: a throwaway
redis-server and Redis Cluster, the hostile web, and the command line of a crawl run as a
process of its own. Not part of the installed package."""
