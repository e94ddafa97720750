"""File ▸ Import conversations…: Lokal's own JSON export, ChatGPT's conversations.json, LM Studio's and Open WebUI's chats."""
