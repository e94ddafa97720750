"""The OpenAI-compatible HTTP API (`lokal serve`): a client of the runtime process, like the window.

    keys.py          the bearer key: made on first use, kept 0600 in the config directory
    errors.py        OpenAI-style error bodies, and how runtime errors map onto HTTP statuses
    schema.py        request bodies, validated field by field
    conversation.py  a stable conversation id from a request's message prefix
    backend.py       the runtime process, its model, and one generation at a time behind a bounded queue
    responses.py     the JSON shapes of completions and their streamed chunks
    http.py          the aiohttp application: auth, CORS, body limit, routes
"""
