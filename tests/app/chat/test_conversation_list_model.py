"""The conversation list model keeps itself newest first (the sidebar's proxy only filters), and stays a valid Qt model through every change."""

from __future__ import annotations

import dataclasses

from PySide6.QtTest import QAbstractItemModelTester

from app.chat.conversation_model import ConversationFilterModel, ConversationListModel, IdRole
from app.storage.store import Conversation


def conv(cid: str, updated_at: float, title: str = "") -> Conversation:
    return Conversation(id=cid, title=title or f"Chat {cid}", created_at=0.0, updated_at=updated_at)


def ids(model) -> list[str]:
    return [model.index(r, 0).data(IdRole) for r in range(model.rowCount())]


def test_the_list_is_newest_first_through_loads_updates_inserts_and_removals(qapp):
    source = ConversationListModel()
    proxy = ConversationFilterModel(source)
    QAbstractItemModelTester(source, QAbstractItemModelTester.FailureReportingMode.Fatal)
    QAbstractItemModelTester(proxy, QAbstractItemModelTester.FailureReportingMode.Fatal)
    source.set_conversations([conv("b", 2), conv("d", 4), conv("a", 1), conv("c", 3)])  # any order in
    assert ids(source) == ids(proxy) == ["d", "c", "b", "a"]

    source.upsert(conv("a", 5))  # the oldest, touched: to the top
    assert ids(proxy) == ["a", "d", "c", "b"]
    source.upsert(conv("d", 0.5))  # moved down past the rest (an import's older time)
    assert ids(proxy) == ["a", "c", "b", "d"]
    source.upsert(dataclasses.replace(source.conversation("c"), title="Renamed"))  # same time: stays, renamed
    assert ids(proxy) == ["a", "c", "b", "d"] and proxy.index(1, 0).data() == "Renamed"
    source.upsert(conv("e", 2.5))  # new, older than some: at its place
    source.upsert(conv("f", 5))  # new, as new as the top: above it, touched last
    assert ids(proxy) == ["f", "a", "c", "e", "b", "d"]
    source.remove("c")
    assert ids(proxy) == ["f", "a", "e", "b", "d"]


def test_the_filter_keeps_the_order_and_follows_renames(qapp):
    source = ConversationListModel()
    proxy = ConversationFilterModel(source)
    source.set_conversations([conv("x", 1, "Regex for dates"), conv("y", 2, "Trip to Lisbon"), conv("z", 3, "More regex")])
    proxy.set_filter_text("REGEX")
    assert ids(proxy) == ["z", "x"]
    source.upsert(conv("y", 4, "Regex in Lisbon"))  # renamed into the filter, and newest
    assert ids(proxy) == ["y", "z", "x"]
    source.upsert(conv("z", 5, "Nothing"))  # renamed out of it
    assert ids(proxy) == ["y", "x"]
