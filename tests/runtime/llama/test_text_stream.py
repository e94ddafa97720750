"""Streaming text never splits a UTF-8 character and never shows a stop string."""

from runtime.llama.text_stream import TextStream


def test_multibyte_characters_split_across_tokens_are_held_until_whole():
    data = "café 日本 🎉".encode()
    stream = TextStream()
    pieces = [stream.push(data[i : i + 1]) for i in range(len(data))]
    pieces.append(stream.finish())
    assert "".join(pieces) == "café 日本 🎉"
    assert all("\ufffd" not in p for p in pieces)
    # the 4-byte emoji comes out in one piece, not in fragments
    assert "🎉" in pieces


def test_stop_string_is_cut_and_never_released():
    stream = TextStream(stop=["\nUser:"])
    out = [stream.push(t.encode()) for t in ["Hello", " there", "\nUs", "er:", " more"]]
    assert "".join(out) == "Hello there"
    assert stream.stopped and stream.text == "Hello there"


def test_partial_stop_prefix_is_released_when_it_turns_out_harmless():
    stream = TextStream(stop=["STOP"])
    out = [stream.push(b"ST"), stream.push(b"ART"), stream.finish()]
    assert out[0] == "" and "".join(out) == "START"
