"""The user's presets in the conversations database (the `presets` table, migration 3 -> 4), beside the
built-in ones (app/presets/builtin.py), which are never stored.

It opens its own connection to the store's file (the Store has made the schema by then): a preset is a
row written in one statement, an import all of its rows in one transaction, so an import that fails
leaves nothing behind. What is read back is checked as anything else that comes in (preset.py), so a row
changed by hand gives an error naming the preset and its field, never a crash.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from app.presets.builtin import builtin_names, builtin_presets, find_builtin
from app.presets.preset import Preset, PresetError, check_name, preset_from
from app.storage.store import BUSY_TIMEOUT_S


@dataclass
class ImportSummary:
    added: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # the same preset is there already
    renamed: dict[str, str] = field(default_factory=dict)  # a different preset had the name: the imported one's new name


class PresetStore:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._db = sqlite3.connect(str(self.path), isolation_level=None, timeout=BUSY_TIMEOUT_S, check_same_thread=False)

    def close(self) -> None:
        self._db.close()

    def user_presets(self) -> list[Preset]:
        """The user's own presets, by name. PresetError names one whose stored row cannot be used."""
        rows = self._db.execute("SELECT name, system_prompt, sampling, model, load_settings FROM presets ORDER BY name COLLATE NOCASE").fetchall()
        return [self._from_row(row) for row in rows]

    def all(self) -> list[Preset]:
        """The built-in presets first (in the window's language), then the user's."""
        return builtin_presets() + self.user_presets()

    def find(self, name: str) -> Preset | None:
        """The preset called `name`: a built-in one (by key, English or translated name) or the user's (any case)."""
        builtin = find_builtin(name)
        if builtin is not None:
            return builtin
        row = self._db.execute("SELECT name, system_prompt, sampling, model, load_settings FROM presets WHERE name = ?", (" ".join(name.split()),)).fetchone()
        return self._from_row(row) if row else None

    def save(self, preset: Preset, replace: bool = False) -> Preset:
        """Store `preset` (checked first); PresetError if its name is a built-in one's, or taken and not `replace`."""
        checked = preset_from(preset.to_json(), f"preset {preset.name!r}")
        if checked.name.casefold() in builtin_names():
            raise PresetError(f"name: {checked.name!r} is the name of a built-in preset; choose another")
        exists = self._db.execute("SELECT 1 FROM presets WHERE name = ?", (checked.name,)).fetchone() is not None
        if exists and not replace:
            raise PresetError(f"name: a preset called {checked.name!r} exists already")
        self._write(checked)
        return checked

    def delete(self, name: str) -> bool:
        return self._db.execute("DELETE FROM presets WHERE name = ?", (name,)).rowcount > 0

    def import_presets(self, presets: list[Preset]) -> ImportSummary:
        """Store the presets of an imported file, all or none: one identical to a stored preset is skipped, one
        whose name is taken (by another preset, or a built-in one) is stored under "Name (2)"."""
        summary = ImportSummary()
        taken = {p.name.casefold(): p for p in self.all()}
        planned: list[Preset] = []
        for preset in presets:
            same = taken.get(preset.name.casefold())
            if same is not None and dataclasses.replace(same, name=preset.name, builtin="") == preset:
                summary.skipped.append(preset.name)
                continue
            name = preset.name
            n = 1
            while name.casefold() in taken:
                n += 1
                name = check_name(f"{preset.name[:70]} ({n})")
            if name != preset.name:
                summary.renamed[preset.name] = name
            else:
                summary.added.append(name)
            planned.append(dataclasses.replace(preset, name=name, builtin=""))
            taken[name.casefold()] = planned[-1]
        self._db.execute("BEGIN IMMEDIATE")
        try:
            for preset in planned:
                self._write(preset)
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
        return summary

    def _write(self, preset: Preset) -> None:
        data = preset.to_json()
        self._db.execute(
            "INSERT INTO presets (name, system_prompt, sampling, model, load_settings, created_at) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(name) DO UPDATE SET name = excluded.name, system_prompt = excluded.system_prompt, sampling = excluded.sampling, "
            "model = excluded.model, load_settings = excluded.load_settings",
            (preset.name, preset.system_prompt, json.dumps(data["sampling"]), preset.model,
             json.dumps(data["load_settings"]) if "load_settings" in data else None, time.time()),
        )

    @staticmethod
    def _from_row(row: tuple) -> Preset:
        name, prompt, sampling, model, loads = row
        where = f"stored preset {name!r}"
        try:
            data = {"name": name, "system_prompt": prompt, "sampling": json.loads(sampling or "{}"), "model": model}
            if loads is not None:
                data["load_settings"] = json.loads(loads)
        except ValueError as exc:
            raise PresetError(f"{where}: its stored settings are not JSON ({exc})") from None
        return preset_from(data, where)
