"""The attacker's view: hostile model output, hostile repositories, hostile servers and session files.

Each test attacks through a public entry point (``query()`` with a scripted hostile model, the CLI in a
cloned repository, a session file on disk) and asserts an observable fact: a sentinel file outside the
working directory was not created, a key did not reach an endpoint, nothing outside was read.
"""
