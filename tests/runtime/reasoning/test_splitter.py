"""The streaming splitter alone: every way a reply's text can be cut into pieces gives the same reasoning and answer."""

import pytest

from runtime.protocol import GenerationStats
from runtime.reasoning.markers import HARMONY, THINK, THINK_BRACKETS, UNNAMED_THINK, opens_block
from runtime.reasoning.reply import ReasoningPlan, ReplyReasoning
from runtime.reasoning.splitter import Parts, ReasoningSplitter

THINKING = "<think>\nThe user greets me.\nI greet back.\n</think>\n\nHello there!"
HARMONY_REPLY = "<|channel|>analysis<|message|>User says hi. Reply kindly.<|end|><|start|>assistant<|channel|>final<|message|>Hi! How can I help?"


def split_in(pieces, syntax=THINK, starts_open=False):
    splitter = ReasoningSplitter(syntax, starts_open)
    out = Parts()
    for piece in pieces:
        out += splitter.push(piece)
    out += splitter.finish()
    return out.reasoning, out.answer


def every_split(text):
    """The text in two pieces at every point, and in one-character pieces."""
    yield [text]
    for cut in range(1, len(text)):
        yield [text[:cut], text[cut:]]
    yield list(text)


@pytest.mark.parametrize(
    "text, syntax, starts_open, expected",
    [
        (THINKING, THINK, False, ("The user greets me.\nI greet back.", "Hello there!")),
        (THINKING, UNNAMED_THINK, False, ("The user greets me.\nI greet back.", "Hello there!")),
        ("  \n<think>short</think>answer", THINK, False, ("short", "answer")),
        # The template opened the block (DeepSeek-R1 distills): the reply starts inside it.
        ("Thinking here.\n</think>\n\nThe answer.", THINK, True, ("Thinking here.", "The answer.")),
        # A <think> the model writes anyway after the template opened the block is the marker, not reasoning.
        ("<think>\nThinking.</think>Answer", THINK, True, ("Thinking.", "Answer")),
        # No block: kept as written, whitespace and a <think> quoted later included.
        ("\n\nPlain answer with <think> in it.", THINK, False, ("", "\n\nPlain answer with <think> in it.")),
        # Cut while thinking: all of it is reasoning.
        ("<think>Still going and", THINK, False, ("Still going and", "")),
        ("Still going </thi", THINK, True, ("Still going </thi", "")),
        ("[THINK]Hmm.[/THINK]Yes.", THINK_BRACKETS, False, ("Hmm.", "Yes.")),
        (HARMONY_REPLY, HARMONY, False, ("User says hi. Reply kindly.", "Hi! How can I help?")),
        ("Plain text, no channels.", HARMONY, False, ("", "Plain text, no channels.")),
        ("<|channel|>analysis<|message|>Cut in the analy", HARMONY, False, ("Cut in the analy", "")),
    ],
)
def test_a_marker_cut_across_pieces_at_every_point_splits_the_same(text, syntax, starts_open, expected):
    for pieces in every_split(text):
        assert split_in(pieces, syntax, starts_open) == expected, pieces


def test_nothing_is_sent_to_the_answer_before_the_block_is_closed():
    splitter = ReasoningSplitter(THINK)
    assert splitter.push("<thi") == Parts()  # may be the open marker: held
    assert splitter.push("nk>Let me see") == Parts("Let me see", "")
    assert splitter.push(" now </th") == Parts(" now", "")  # the space waits: the block may end here
    assert splitter.push("ink>\n\nDone") == Parts("", "Done")


def test_a_reply_that_does_not_open_a_block_streams_at_once():
    splitter = ReasoningSplitter(THINK)
    assert splitter.push("Hi") == Parts("", "Hi")
    assert splitter.in_answer and not splitter.thought


def test_opens_block_reads_the_end_of_the_prompt():
    assert opens_block("<｜User｜>hi<｜Assistant｜><think>\n", THINK)
    assert not opens_block("<|im_start|>assistant\n<think>\n\n</think>\n\n", THINK)
    assert not opens_block("<|im_start|>assistant\n", THINK)


def count(pieces, **plan):
    stats = GenerationStats()
    reply = ReplyReasoning(ReasoningPlan(THINK, **plan), stats, 0.0)
    for piece in pieces:  # one token's text each
        reply.take(piece)
    reply.take_final("")
    return stats, reply


def test_tokens_are_counted_on_the_side_their_text_lands():
    stats, reply = count(["<think>", "a", " b", "</think>", "\n\n", "Hi", "!"])
    assert (stats.reasoning_tokens, stats.answer_tokens) == (4, 3)
    assert (reply.reasoning, reply.answer) == ("a b", "Hi!")
    assert stats.ttfat_ms > 0 and stats.thinking_ms > 0


def test_leading_whitespace_waits_for_the_side_it_turns_out_on():
    stats, _ = count(["\n", " ", "Hello", "!"])
    assert (stats.reasoning_tokens, stats.answer_tokens) == (0, 4)
    stats, _ = count(["\n", "<think>", "x", "</think>", "y"])
    assert (stats.reasoning_tokens, stats.answer_tokens) == (4, 1)


def test_the_budget_writes_the_closing_tokens_in_the_models_place():
    stats = GenerationStats()
    reply = ReplyReasoning(ReasoningPlan(THINK, budget=2, closing_tokens=[901, 902]), stats, 0.0)
    assert reply.steer(5) == 5
    reply.take("<think>")
    assert reply.steer(6) == 6
    reply.take("one")
    assert reply.steer(7) == 901  # two thinking tokens spent: the closing text begins
    reply.take("\n</think>")
    assert reply.steer(8) == 902
    reply.take("\n\n")
    assert reply.steer(9) == 9 and reply.splitter.in_answer


def test_a_budget_of_zero_closes_a_block_the_prompt_opened_at_once():
    reply = ReplyReasoning(ReasoningPlan(THINK, starts_open=True, budget=0, closing_tokens=[7]), GenerationStats(), 0.0)
    assert reply.steer(1) == 7


def test_a_continued_reply_reads_what_it_has_first():
    reply = ReplyReasoning(ReasoningPlan(THINK, prefix="<think>half a thou"), GenerationStats(), 0.0)
    parts = reply.take("ght</think>Answer")
    assert parts == Parts("ght", "Answer")


def test_a_spent_budget_waits_while_the_model_writes_the_closing_marker_itself():
    """The budget's closing text is forced only where it fits: not after "</think" the model has begun, which its
    grammar already took (the forced text would not fit it: SamplerError). Seen on the starter model, whose
    grammar-led thought ended in "</think" just as the budget was spent."""
    closing = [1, 2, 3]
    reply = ReplyReasoning(ReasoningPlan(THINK, budget=3, closing_tokens=closing), GenerationStats(), 0.0)
    for piece in ("<think>", "the", " sky", " blue"):
        reply.take(piece)
    assert reply.stats.reasoning_tokens >= 3
    reply.take("</think")
    assert reply.steer(46) == 46 and not reply.forcing, "the model goes on writing its marker"
    reply.take(">")
    assert reply.splitter.in_answer and reply.steer(7) == 7, "closed by the model: nothing to force"

    broken = ReplyReasoning(ReasoningPlan(THINK, budget=3, closing_tokens=closing), GenerationStats(), 0.0)
    for piece in ("<think>", "the", " sky", " blue", "</th"):
        broken.take(piece)
    assert broken.steer(9) == 9
    broken.take("ere")  # not a marker after all: reasoning goes on, over budget
    assert [broken.steer(9) for _ in closing] == closing, "then the closing text is forced"
