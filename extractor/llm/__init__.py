"""The LLM path: prompts, the instructor/openai client, retries, cassettes, grounding of quotes, accounting."""
