"""Remote runtimes in the window (the window's own "Serve the API" is app/api).

    keystore.py   API keys: the OS keyring where there is one, else a 0600 file
    endpoint_model.py  the remote endpoints the user added, and their models, as Qt list models
    client.py     an OpenAI-compatible client on QNetworkAccessManager: models, streamed chat, client-side figures
    chat_link.py  RemoteChatLink: a remote model behind the link interface the chat uses
    mode.py       RemoteMode: the endpoints, their models and the chosen one
    widgets.py    the "Add remote endpoint" dialog; it only renders the above
    feature.py    install(context): the remote section of the Model menu, and routing the chat
"""
