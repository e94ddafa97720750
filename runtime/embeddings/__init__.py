"""The embedding model, loaded in its own llama.cpp context beside the chat model."""
