"""The widgets a tool asks for by name (ToolDescription.live_panels / result_panels), and the
registries that map those names to them."""
