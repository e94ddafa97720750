"""The message tree under random edits, regenerations, branch switches, deletions and undos (hypothesis):
the tree stays valid, matches a plain model of it, and the selected path is always a root-to-leaf path."""

from __future__ import annotations

import sqlite3

from hypothesis import HealthCheck, settings
from hypothesis import strategies as s
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from app.storage.store import DeletedBranch, Store


ROOT = object()  # TreeMachine._add's marker: a new first message (an edit of the first one)


class TreeMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        import tempfile

        self.folder = tempfile.TemporaryDirectory()
        self.store = Store(f"{self.folder.name}/c.sqlite3")
        self.conv = self.store.create_conversation("t").id
        self.parent_of: dict[int, int | None] = {}  # the model: every message and its parent
        self.undo: list[DeletedBranch] = []
        self.count = 0

    def teardown(self) -> None:
        self.store.close()
        self.folder.cleanup()

    def _add(self, role: str, parent: object = None) -> int:
        """A message at the end of the path on screen; under `parent` if given (ROOT: a new first message)."""
        self.count += 1
        text = f"{role} {self.count}"
        if parent is None:
            msg = self.store.add_message(self.conv, role, text)
        else:
            msg = self.store.add_message(self.conv, role, text, parent_id=None if parent is ROOT else parent)
        self.parent_of[msg.id] = msg.parent_id
        return msg.id

    def _path(self) -> list:
        return self.store.messages(self.conv)

    @rule()
    def send(self) -> None:
        """A message of yours and its reply, at the end of the path on screen."""
        self._add("user")
        self._add("assistant")

    @precondition(lambda self: self.parent_of)
    @rule()
    def regenerate(self) -> None:
        last = self._path()[-1]
        if last.role != "assistant":
            return
        self.store.set_selected_leaf(self.conv, last.parent_id)
        self._add("assistant")

    @precondition(lambda self: self.parent_of)
    @rule(pick=s.integers(min_value=0))
    def edit(self, pick: int) -> None:
        users = [m for m in self._path() if m.role == "user"]
        if not users:
            return
        target = users[pick % len(users)]
        self._add("user", parent=target.parent_id if target.parent_id is not None else ROOT)
        self._add("assistant")

    @precondition(lambda self: self.parent_of)
    @rule(pick=s.integers(min_value=0), step=s.sampled_from([-1, 1]))
    def switch(self, pick: int, step: int) -> None:
        path = self._path()
        target = path[pick % len(path)]
        siblings = self.store.siblings(target.id)
        at = [m.id for m in siblings].index(target.id)
        if 0 <= at + step < len(siblings):
            leaf = self.store.select_branch(siblings[at + step].id)
            assert leaf is not None
            # The path goes on to the newest leaf under the chosen sibling.
            under = {siblings[at + step].id} | self._descendants(siblings[at + step].id)
            assert leaf == max(under)

    @precondition(lambda self: self.parent_of)
    @rule(pick=s.integers(min_value=0))
    def delete_branch(self, pick: int) -> None:
        ids = sorted(self.parent_of)
        target = ids[pick % len(ids)]
        gone = {target} | self._descendants(target)
        deleted = self.store.delete_branch(target)
        assert deleted is not None and {m.id for m in deleted.messages} == gone
        self.undo.append(deleted)
        for i in gone:
            del self.parent_of[i]

    @precondition(lambda self: self.undo)
    @rule()
    def undo_delete(self) -> None:
        deleted = self.undo.pop()
        self.store.restore_branch(deleted)
        for m in deleted.messages:
            self.parent_of[m.id] = m.parent_id

    def _descendants(self, message_id: int) -> set[int]:
        out: set[int] = set()
        frontier = [message_id]
        while frontier:
            children = [i for i, p in self.parent_of.items() if p in frontier]
            out.update(children)
            frontier = children
        return out

    @invariant()
    def the_tree_matches_the_model(self) -> None:
        every = self.store.all_messages(self.conv)
        assert {m.id: m.parent_id for m in every} == self.parent_of
        by_id = {m.id: m for m in every}
        for m in every:
            expected_depth = 0 if m.parent_id is None else by_id[m.parent_id].depth + 1
            assert m.depth == expected_depth
            siblings = sorted(i for i, p in self.parent_of.items() if p == m.parent_id)
            assert (m.branch, m.branches) == (siblings.index(m.id) + 1, len(siblings))
        with sqlite3.connect(str(self.store.path)) as db:
            assert db.execute("PRAGMA foreign_key_check").fetchall() == []

    @invariant()
    def the_selected_path_runs_from_a_first_message_to_a_leaf(self) -> None:
        path = self._path()
        leaf = self.store.conversation(self.conv).selected_leaf
        if not self.parent_of:
            assert path == [] and leaf is None
            return
        assert path and path[0].parent_id is None and path[-1].id == leaf
        assert all(b.parent_id == a.id for a, b in zip(path, path[1:]))
        assert leaf not in self.parent_of.values()  # a leaf: nothing hangs from it
        assert [m.depth for m in path] == list(range(len(path)))


TreeMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
test_the_tree_under_random_edits_regenerations_deletions_and_undos = TreeMachine.TestCase
