"""The model browser (catalog, search, quantization levels with fit badges, draft partner) and the
downloads panel. Self-contained widgets over Qt models; all work happens in the runtime, reached
through app.runtime_link.RuntimeLink (hub.* and download.* methods, download.progress notifications)."""
