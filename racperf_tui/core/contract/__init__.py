"""The run contract: what a tool declares (tool), what it asks a host to run (invocation),
what it reports (events) and where it runs (hosts)."""
