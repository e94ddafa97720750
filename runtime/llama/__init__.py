"""llama.cpp's building blocks, below everything that coordinates them.

The model and its KV sequences (llama_model), the sampler chain (sampling), one
reply's decoding step (generation), token alignment and text streaming, the
devices llama.cpp sees and the memory a load needs. The engine, the scheduler,
speculative decoding and the KV store all build on these, and none of these
imports them back: the import-linter contracts in pyproject.toml keep it so.
"""
