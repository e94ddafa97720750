"""Documents attached to messages: the content-addressed store, text extraction, chunking and retrieval."""
