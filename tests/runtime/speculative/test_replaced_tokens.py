"""The tokens a conversation's edit replaces: learnt where a copy broke and then went on further in the source, and
lookup drafts that end before the next one."""

from __future__ import annotations

import pytest

from runtime.llama.generation import BatchSoFar
from runtime.llama.sampling import SamplingConfig
from runtime.speculative.decoder import Drafting
from runtime.speculative.replaced import MATCH_MIN, MATCH_MIN_WHOLE_REPLY, PRIOR_COPIES, RESUMED_RUN, SPAN_MAX, ReplacedTokens
from spec_helpers import lookup_drafting

OLD, NEW = 900, 901  # a name the edit renames
SOURCE = [*range(100, 110), OLD, *range(110, 150), OLD, *range(150, 190), OLD, *range(190, 230)]  # distinct tokens but the old name
FIRST, SECOND, THIRD = (i for i, t in enumerate(SOURCE) if t == OLD)


def renamed(end: int) -> list[int]:
    """The reply, having copied SOURCE up to `end` with the old name renamed."""
    return [NEW if t == OLD else t for t in SOURCE[:end]]


def test_a_copy_that_goes_on_past_a_token_the_reply_did_not_copy_learns_that_token_replaced():
    replaced = ReplacedTokens()
    replaced.judged(SOURCE + renamed(FIRST - 2), FIRST - 2, 8, drafted=6, agreed=2)  # the draft broke at the old name
    assert replaced.broken_at == FIRST
    history = SOURCE + renamed(FIRST + 9)  # the new name, then 8 tokens of the source again
    replaced.judged(history, FIRST + 9, 8, drafted=4, agreed=4)
    assert replaced.broken_at is None
    assert replaced.replaced == {OLD: 1}
    chances = replaced.kept(SOURCE[FIRST - 3 : FIRST + 3])
    assert chances[:3] == [1.0, 1.0, 1.0]
    assert chances[3] == pytest.approx(1 - 1 / (1 + PRIOR_COPIES))
    assert chances[4:] == [chances[3]] * 2  # the chance of having copied the first m only falls at a replaced token


def test_a_token_the_reply_keeps_copying_is_no_sign_of_an_edit():
    replaced = ReplacedTokens()
    replaced.replaced[OLD] = 1
    replaced.copied[OLD] = 40
    assert replaced.kept([OLD])[0] > 0.97


def test_an_inserted_line_replaces_nothing():
    replaced = ReplacedTokens()
    replaced.judged(SOURCE + renamed(FIRST - 2), FIRST - 2, 8, drafted=6, agreed=2)
    inserted = SOURCE + SOURCE[:FIRST] + [950, 951, 952] + SOURCE[FIRST : FIRST + 8]  # the copy goes on where it broke
    replaced.judged(inserted, FIRST + 8, 8, drafted=4, agreed=4)
    assert not replaced.replaced and replaced.broken_at is None


def test_a_run_found_shorter_than_it_is_does_not_count_its_first_token_replaced():
    # The index finds a 9-token run as an 8-token match (lookup.LENGTHS): the 9th token back was copied too.
    replaced = ReplacedTokens()
    replaced.judged(SOURCE + SOURCE[: FIRST - 2], FIRST - 2, 8, drafted=6, agreed=2)
    inserted = SOURCE + SOURCE[:FIRST] + [950] + SOURCE[FIRST : FIRST + 9]
    replaced.judged(inserted, FIRST + 9, 8, drafted=4, agreed=4)
    assert not replaced.replaced


def test_a_short_run_found_elsewhere_after_a_break_does_not_end_it():
    replaced = ReplacedTokens()
    replaced.judged(SOURCE + renamed(FIRST - 2), FIRST - 2, 8, drafted=6, agreed=2)
    coincidence = SOURCE + renamed(FIRST) + [NEW, *SOURCE[20:24]]  # the new name, then 4 tokens that occur further on
    replaced.judged(coincidence, 24, 4, drafted=3, agreed=RESUMED_RUN - 4 - 1)
    assert replaced.broken_at == FIRST and not replaced.replaced
    replaced.judged(SOURCE + renamed(FIRST + 9), FIRST + 9, 8, drafted=4, agreed=4)  # the copy goes on after the new name
    assert replaced.replaced == {OLD: 1}


def test_two_edits_close_together_each_count_their_own_tokens_replaced():
    # js-modern: `count = count + 1;` became `count += 1;`, and the copy broke at ` =`. A few tokens on, the `if`
    # line's condition was rewritten too, and the copy went on only after that, 18 source tokens after the break:
    # more than a single edit's span. The reply's own copy of the tokens between says which were replaced.
    replaced = ReplacedTokens()
    at = 40
    replaced.judged(SOURCE + SOURCE[: at - 2], at - 2, 8, drafted=6, agreed=2)
    assert replaced.broken_at == at
    between = SOURCE[at + 3 : at + 15]  # copied between the two edits
    resumed = SOURCE[at + 19 : at + 27]
    reply = SOURCE[:at] + [950] + between + [951] + resumed  # source[at:at+3] and source[at+15:at+19] rewritten
    assert 19 > SPAN_MAX
    replaced.judged(SOURCE + reply, at + 27, 8, drafted=4, agreed=4)
    assert replaced.broken_at is None
    assert sorted(replaced.replaced.elements()) == SOURCE[at : at + 3] + SOURCE[at + 15 : at + 19]


def test_a_copy_found_again_far_on_after_other_text_counts_nothing_replaced():
    # The copy jumped (the reply wrote its own text, then copied from further on): what it skipped was not replaced.
    replaced = ReplacedTokens()
    at = 40
    replaced.judged(SOURCE + SOURCE[: at - 2], at - 2, 8, drafted=6, agreed=2)
    reply = SOURCE[:at] + list(range(960, 972)) + SOURCE[at + 30 : at + 38]
    replaced.judged(SOURCE + reply, at + 38, 8, drafted=4, agreed=4)
    assert replaced.broken_at is None and not replaced.replaced


def draft_after(drafting: Drafting, history: list[int]):
    drafting.lookup.reset(history)
    return drafting.propose(history, 64, SamplingConfig(temperature=0.0), None, BatchSoFar())


def drafting(source: list[int] = SOURCE) -> Drafting:
    """Lookup drafting for a reply that edits `source`, nothing learnt yet."""
    return lookup_drafting(source)


def test_once_the_reply_renamed_a_token_lookup_drafts_end_before_its_next_use():
    learnt = drafting()
    # The first rename: a draft broke at the old name, and the copy went on after the new name.
    learnt.lookup.reset(SOURCE + renamed(FIRST - 2))
    learnt.judged(8, FIRST - 2, 6, 2, of_reply=False)
    learnt.lookup.reset(SOURCE + renamed(FIRST + 9))
    learnt.judged(8, FIRST + 9, 4, 4, of_reply=False)
    assert learnt.controller.replaced.replaced == {OLD: 1}
    for end in (SECOND - 6, THIRD - 6):
        history = SOURCE + renamed(end)
        unaware = draft_after(drafting(), history)
        assert unaware is not None and OLD in unaware.tokens  # without it, a copy this long runs on past the old name
        draft = draft_after(learnt, history)
        assert draft is not None and draft.start == end
        assert draft.tokens == SOURCE[end : end + 6]  # it ends before the old name, which the reply will not copy


@pytest.mark.parametrize("before", [[], [960, 961]])
def test_an_edit_of_the_first_line_is_learnt_when_the_reply_has_copied_every_token_before_it(before):
    # scanner-pathlib: the reply opened with the prompt's code fence and language, 3 tokens as the prompt has them,
    # then wrote `from pathlib import Path` where the source had `import os`. A suffix match that short is often a
    # coincidence, but not when it is the whole reply: it has copied from its first token. After other text (`before`),
    # the same 3 tokens say nothing of where the reply stands.
    opening = 3
    assert MATCH_MIN_WHOLE_REPLY <= opening < MATCH_MIN
    learnt = drafting()
    learnt.lookup.reset(SOURCE + before + SOURCE[:opening])
    learnt.judged(opening, opening, 6, 0, of_reply=False)  # the draft broke at once: the first line was rewritten
    learnt.lookup.reset(SOURCE + before + SOURCE[:opening] + [950] + SOURCE[opening + 1 : opening + 9])  # then copied again
    learnt.judged(8, opening + 9, 4, 4, of_reply=False)
    assert learnt.controller.replaced.replaced == ({} if before else {SOURCE[opening]: 1})


def test_a_one_token_match_is_a_coincidence_even_as_the_whole_reply():
    # js-modern and scanner-pathlib: the reply's first token, its code fence, matched the fence that closes the prompt's code.
    learnt = drafting()
    learnt.lookup.reset(SOURCE + SOURCE[:1])
    learnt.judged(1, 1, 6, 0, of_reply=False)
    assert learnt.controller.replaced.broken_at is None


# A module of three functions, each a line ending its `def` (DEF), the body's indent, then the body; the edit inserts a
# logging line at the top of every body, which ends with the next line's indent as the source's `def` line does.
DEF, INDENT = 800, 801
BODY = 30
MODULE = [t for f in range(3) for t in (DEF, INDENT, *range(300 + 40 * f, 300 + 40 * f + BODY))]
LOGGING = [850, 851, 852, INDENT]
BODY_AT = [f * (BODY + 2) + 2 for f in range(3)]  # where each body starts in MODULE


def logged(end: int) -> list[int]:
    """The reply, having copied MODULE up to `end` with a logging line inserted before every body but the first."""
    out: list[int] = []
    for i, t in enumerate(MODULE[:end]):
        if i in BODY_AT[1:]:
            out.extend(LOGGING)
        out.append(t)
    return out


def learn_the_first_insertion(replaced: ReplacedTokens) -> None:
    """The reply copied the first function and the second's `def` line, then wrote a logging line, then went on with the body."""
    start = BODY_AT[1]
    reply = MODULE[:start]  # the first function as it was (no logging before the first body in this reply)
    replaced.judged(MODULE + reply, start, 8, drafted=6, agreed=0)  # the draft broke at the body's first token
    assert replaced.broken_at == start
    resumed = reply + LOGGING + MODULE[start : start + 8]  # the inserted line, then the body, copied again
    replaced.judged(MODULE + resumed, start + 8, 8, drafted=4, agreed=4)


def test_a_copy_that_goes_on_where_it_broke_learns_the_source_tokens_before_that_point_as_a_place_the_edit_inserts():
    replaced = ReplacedTokens()
    learn_the_first_insertion(replaced)
    assert replaced.broken_at is None and not replaced.replaced
    assert replaced.inserted == {(DEF, INDENT): 1}
    # A later draft copying from the second body into the third function: its chance falls at the third body's first token.
    start = BODY_AT[2] - 6
    chances = replaced.not_inserted(MODULE, start, 8, 10)
    assert chances[:6] == [1.0] * 6
    assert chances[6] == pytest.approx(1 - 1 / (1 + PRIOR_COPIES))
    assert chances[7:] == [chances[6]] * 3


def test_a_place_drafts_keep_copying_past_is_no_sign_of_an_insertion():
    replaced = ReplacedTokens()
    learn_the_first_insertion(replaced)
    before = replaced.not_inserted(MODULE, BODY_AT[2] - 1, 8, 2)[1]
    history = MODULE + MODULE[: BODY_AT[2] - 1]
    replaced.judged(history, BODY_AT[2] - 1, 8, drafted=4, agreed=4)  # a draft copied past the third `def` line and held
    assert replaced.passed == {(DEF, INDENT): 1}
    assert replaced.not_inserted(MODULE, BODY_AT[2] - 1, 8, 2)[1] > before


def test_where_the_suffix_matched_less_than_the_context_the_first_token_is_not_judged_by_it():
    # The reply's own tokens before the draft may differ from the source's: after the inserted line, only the indent matched.
    replaced = ReplacedTokens()
    learn_the_first_insertion(replaced)
    assert replaced.not_inserted(MODULE, BODY_AT[2], 1, 3) == [1.0, 1.0, 1.0]
    assert replaced.not_inserted(MODULE, BODY_AT[2], 2, 3)[0] < 1.0


def test_once_the_reply_inserted_a_line_lookup_drafts_end_before_the_next_place_it_inserts():
    learnt = drafting(MODULE)
    learn_the_first_insertion(learnt.controller.replaced)
    reply = logged(BODY_AT[2] - 6)  # near the end of the second body, 6 tokens before the third body
    unaware = draft_after(drafting(MODULE), MODULE + reply)
    assert unaware is not None and len(unaware.tokens) > 6  # without it, the copy runs on into the third body
    draft = draft_after(learnt, MODULE + reply)
    assert draft is not None and draft.start == BODY_AT[2] - 6
    assert draft.tokens == MODULE[BODY_AT[2] - 6 : BODY_AT[2]]  # it ends with the third `def` line and its indent


def test_an_insertion_learnt_from_a_resumed_copy_also_says_whether_a_draft_at_each_end_of_a_line_in_it_would_have_held():
    one_line = ReplacedTokens()
    learn_the_first_insertion(one_line)
    assert one_line.resumes == [1, 0]  # one inserted line: the copy went on after its indent
    two_lines = ReplacedTokens()
    start = BODY_AT[1]
    two_lines.judged(MODULE + MODULE[:start], start, 8, drafted=6, agreed=0)
    resumed = MODULE[:start] + [850, INDENT, 851, INDENT] + MODULE[start : start + 8]
    two_lines.judged(MODULE + resumed, start + 8, 8, drafted=4, agreed=4)
    assert two_lines.inserted == {(DEF, INDENT): 1}
    assert two_lines.resumes == [1, 1]  # a draft after the first line's indent would have broken, after the second's held


def reply_inserting_at_the_third_body(learnt: Drafting) -> list[int]:
    """The reply, having copied MODULE up to the third body with the second one logged; `learnt` drafted up to the third
    body's place, and the target wrote the logging line's first token there."""
    reply = logged(BODY_AT[2])
    learnt.lookup.reset(MODULE + reply)
    learnt.judged(8, BODY_AT[2] - 6, 6, 6, of_reply=False, next_token=LOGGING[0])
    return reply + LOGGING


def test_where_the_reply_inserts_at_a_learnt_place_a_draft_resumes_the_copy_as_soon_as_the_inserted_line_ends():
    learnt = drafting(MODULE)
    learn_the_first_insertion(learnt.controller.replaced)
    learnt.controller.replaced.resumes = [3, 0]  # the inserted lines so far were one line each
    reply = reply_inserting_at_the_third_body(learnt)
    assert learnt.controller.replaced.broken_at == BODY_AT[2]
    mid_line = draft_after(learnt, MODULE + reply[:-1])  # the inserted line not yet ended
    assert mid_line is None or not mid_line.resumes
    draft = draft_after(learnt, MODULE + reply)
    assert draft is not None and draft.resumes and draft.start == BODY_AT[2]
    assert draft.tokens == MODULE[BODY_AT[2] : BODY_AT[2] + len(draft.tokens)] and len(draft.tokens) > 8
    unaware = draft_after(drafting(MODULE), MODULE + reply)  # prompt lookup alone, after a 1-token match (the indent)
    assert unaware is None or len(unaware.tokens) < len(draft.tokens)
    # It held: the reply inserted there again, and the copy goes on.
    learnt.judged(draft.match, draft.start, len(draft.tokens), len(draft.tokens), of_reply=False, resumes=True)
    replaced = learnt.controller.replaced
    assert replaced.resumes == [4, 0] and replaced.inserted == {(DEF, INDENT): 2} and replaced.broken_at is None


def test_a_copy_is_not_resumed_where_the_inserted_text_has_gone_on_past_its_lines_ends():
    learnt = drafting(MODULE)
    learn_the_first_insertion(learnt.controller.replaced)
    learnt.controller.replaced.resumes = [0, 3]  # each inserted text ran several lines
    reply = reply_inserting_at_the_third_body(learnt)
    draft = draft_after(learnt, MODULE + reply)
    assert draft is None or not draft.resumes
    # A resumed draft that broke at once: the inserted text goes on, and the copy still stands where it broke.
    learnt.controller.replaced.resumes = [3, 0]
    draft = draft_after(learnt, MODULE + reply)
    assert draft is not None and draft.resumes
    learnt.judged(draft.match, draft.start, len(draft.tokens), 0, of_reply=False, resumes=True)
    assert learnt.controller.replaced.resumes == [3, 1] and learnt.controller.replaced.broken_at == BODY_AT[2]
