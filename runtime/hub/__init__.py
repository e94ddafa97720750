"""Models from Hugging Face: the curated catalog, search, quantization levels, the fit check
before a download, draft-model compatibility, and the downloader.

Nothing here imports llama_cpp or Qt: the runtime serves it over the protocol
(runtime/hub/service.py), the CLI and the window only call it.
"""
