"""Extraction backends: each turns a Document into an Extraction of the same schema."""
