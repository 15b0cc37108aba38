"""A model-API gateway: external agent harnesses talk to their model through it, and every turn becomes trace events.

``Gateway`` (``app``) is the streaming proxy; ``wire`` reads the three protocols
(Anthropic Messages, OpenAI Chat Completions and Responses); ``traffic`` holds the
per-exchange records, deduplication and tool-result matching; ``events`` turns
exchanges into core events. The gateway is an edge: the core never imports it.
"""
