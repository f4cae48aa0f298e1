"""The agent (L4): a tool registry, one readable ReAct loop, the library tools."""
