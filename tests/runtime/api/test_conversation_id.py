"""A stateless API request is tied to its conversation by the conversation's opening."""

import hashlib

from runtime.api.conversation import chat_conversation_id, text_conversation_id
from runtime.protocol import Attachment, ChatMessage


def test_every_turn_of_a_conversation_gets_the_same_id():
    turn1 = [ChatMessage("system", "Be brief."), ChatMessage("user", "Name a colour.")]
    turn2 = turn1 + [ChatMessage("assistant", "Blue."), ChatMessage("user", "Another?")]
    turn3 = turn2 + [ChatMessage("assistant", "Red."), ChatMessage("user", "And one more?")]
    assert chat_conversation_id(turn1) == chat_conversation_id(turn2) == chat_conversation_id(turn3)


def test_different_openings_are_different_conversations():
    a = chat_conversation_id([ChatMessage("user", "Name a colour.")])
    b = chat_conversation_id([ChatMessage("user", "Name a fruit.")])
    c = chat_conversation_id([ChatMessage("system", "Be verbose."), ChatMessage("user", "Name a colour.")])
    assert len({a, b, c}) == 3


def test_a_growing_raw_prompt_keeps_its_id():
    opening = "Once upon a time " * 20
    assert text_conversation_id(opening) == text_conversation_id(opening + "there was a model.")
    assert text_conversation_id("a") != text_conversation_id("b")


def test_the_same_question_about_another_picture_is_another_conversation():
    about = lambda picture: [ChatMessage("user", "What is this?", attachments=[Attachment("image", picture * 64)])]
    assert chat_conversation_id(about("a")) != chat_conversation_id(about("b"))
    assert chat_conversation_id(about("a")) == chat_conversation_id(about("a") + [ChatMessage("assistant", "A cat."), ChatMessage("user", "Sure?")])
    # A conversation without pictures keeps the id it had before pictures were taken.
    assert chat_conversation_id([ChatMessage("user", "Name a colour.")]) == "api-chat-" + hashlib.sha256(b'[["user", "Name a colour."]]').hexdigest()[:16]
