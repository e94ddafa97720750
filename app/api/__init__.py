"""The window's "Serve the API": its own runtime serves the OpenAI-compatible API (runtime/api).

    server.py    ApiServer: api.start / api.stop on the window's runtime link, its state, URL and key
    panel.py     the toggle, the URL and the key; it renders ApiServer
    feature.py   install(context): Model ▸ Serve the API…, and the status line while a reply waits for the API's
"""
