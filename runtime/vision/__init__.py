"""Pictures in prompts: llama.cpp's multimodal library (mtmd) beside the chat model.

A projector GGUF (`mmproj`) loaded with the model turns a picture into embeddings the text model
reads in place of tokens. A picture sits in a prompt as a run of placeholder ids (positions.py), so
everything that compares, rewinds, saves and restores token lists keeps working; the engine thread
evaluates such a run into the reply's own sequence (projector.py) where it would decode text.
"""
