"""A plugin that cannot be imported: `openagent plugins` must list it with this error."""

raise ImportError("openagent_clibroken needs a library that is not installed")
