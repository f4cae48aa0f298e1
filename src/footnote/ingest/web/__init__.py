"""Evidence from outside the library: the fetcher and its egress policy, page snapshots,
web search providers, scholarly search and licensed databases (the research job's sources)."""
