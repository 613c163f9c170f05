"""``wass-chat mcp``: the assistant as a Model Context Protocol server (docs/mcp.md).

``server`` (the tools, resources and prompts on the SDK's low-level server, the approvals),
``tool_table`` (the chat's ``TOOL_SPECS`` as MCP tools, and the result every tool returns),
``resources`` (resources and prompts), ``approval_codes`` (one-time codes), ``run_cancel`` (a
run's cancellation as a plan), ``audit_log`` (JSONL of every call), ``transports`` (stdio,
Streamable HTTP with a bearer token). Its floor is above ``wass_chat`` and below the CLI
(tests/test_imports.py): nothing else in ``wass_chat`` imports it.
"""
