"""Remote runtimes and the local API, in the window.

    keystore.py   API keys: the OS keyring where there is one, else a 0600 file
    endpoints.py  the remote endpoints the user added, and their models, as Qt list models
    client.py     an OpenAI-compatible client on QNetworkAccessManager: models, streamed chat, client-side figures
    serve.py      the "Serve the API" toggle: `lokal serve` as a QProcess, its URL and key
    widgets.py    the "Add remote endpoint" dialog and the API panel; they only render the above
"""
