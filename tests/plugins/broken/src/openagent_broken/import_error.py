"""A plugin whose import fails (a missing dependency)."""

import a_module_that_is_not_installed  # noqa: F401
