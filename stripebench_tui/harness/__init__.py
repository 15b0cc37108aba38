"""External agent harnesses (Claude Code, Codex CLI, mini-swe-agent, a command of the user's) run as processes behind
the model gateway.

``external`` holds the agent that starts a harness and turns the gateway's traffic into turns; ``harnesses`` the
adapters (a little data and one command-line function each; ``codex`` and ``mini_swe_agent`` have a module each),
``installers`` puts them in the cache at pinned versions. The agents registry names them by string, so this
package sits above ``agents``, ``gateway`` and ``runtime`` without any of them importing it.
"""
