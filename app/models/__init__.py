"""Local models: the GGUF files on this machine, grouped by model and quantization, and the one loaded."""
