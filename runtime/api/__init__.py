"""The OpenAI-compatible HTTP API, served from inside the runtime process (`api.start`; `lokal serve`, the window's toggle).

    address.py       where it may listen: loopback unless the network is allowed in so many words
    service.py       api.start / api.stop: the aiohttp application on a thread with its own event loop
    keys.py          the bearer key: made on first use, kept 0600 in the config directory
    errors.py        OpenAI-style error bodies, and how runtime errors map onto HTTP statuses
    schema.py        request bodies, validated field by field
    constraints.py   a request's grammar and JSON schema, checked on a worker thread (not the event loop)
    conversation.py  a stable conversation id from a request's message prefix
    backend.py       the runtime's engine, its model, and one API generation at a time behind a bounded queue
    responses.py     the JSON shapes of completions and their streamed chunks
    http.py          the aiohttp application: auth, CORS, body limit, routes
"""
