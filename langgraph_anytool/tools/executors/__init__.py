"""Executors: local, http, virtual, llm-simulated, template-simulated."""
