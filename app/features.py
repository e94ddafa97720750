"""What a feature may use of the window it plugs into: FeatureContext.

Features (app/remote, app/api, app/kvcache) are installed by app/main.py with install(context). They
get this context, not the window: it names everything they may use, so mypy refuses a feature that
reaches for anything else (a widget of the window, its loader, its store). The window is the one
implementation (MainWindow.feature_context()).

    context.menu(MenuId.EDIT).addAction(...)                    # a command in a menu, by its id
    context.model_menu.add_section("remote", build, order=20)   # a section of the Model menu
    QDialog(context.window())                                   # the window as a widget: a dialog's parent
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Protocol, TypeVar

from PySide6.QtWidgets import QMenu, QWidget

from app.ui.menus import MenuId, ModelMenu

if TYPE_CHECKING:  # names for mypy only: a feature reaches the chat and the model session through this context, never by import
    from app.attachments.service import Attacher
    from app.chat.controller import ChatController
    from app.models.session import ModelSession
    from app.runtime_link import RuntimeLink

Feature = TypeVar("Feature")


class FeatureContext(Protocol):
    restart_requested: bool  # View ▸ Language asked to open the window again once it closes; a guard that keeps it open clears it

    @property
    def link(self) -> RuntimeLink:
        """The window's runtime process."""
        ...

    @property
    def session(self) -> ModelSession:
        """The model the runtime holds, or is loading."""
        ...

    @property
    def chat(self) -> ChatController:
        """The conversations, and where their replies come from."""
        ...

    @property
    def attacher(self) -> Attacher:
        """The attachments of the message being written (the composer's chips)."""
        ...

    @property
    def model_menu(self) -> ModelMenu:
        """The Model menu, which model sources add sections to."""
        ...

    @property
    def is_shut_down(self) -> bool: ...

    def window(self) -> QWidget:
        """The window as a widget: the parent of a feature's dialogs, hidden or shown by the API's background mode."""
        ...

    def menu(self, menu_id: MenuId) -> QMenu: ...

    def load_model(self, path: str) -> None:
        """Load the GGUF file at `path` with its stored load settings (a preset's model)."""
        ...

    def show_banner(self, text: str) -> None:
        """Say something that went wrong, above the conversation, until the user dismisses it."""
        ...

    def show_status(self, text: str, timeout_ms: int = 0) -> None:
        """Say something in the status bar (0: until cleared)."""
        ...

    def clear_status(self) -> None: ...

    def add_status_widget(self, widget: QWidget) -> None:
        """Keep `widget` in the status bar (at the left of its lasting part: temporary messages never cover it)."""
        ...

    def add_close_guard(self, guard: Callable[[], bool]) -> None:
        """`guard()` runs when the user closes the window: True lets it close; False keeps it open, and the
        guard then asks its question and ends with quit_now(), hiding the window, or nothing (cancelled)."""
        ...

    def quit_now(self) -> None:
        """Close for good, without asking the guards again."""
        ...

    def bring_to_front(self) -> None: ...

    def add_feature(self, name: str, feature: Feature) -> Feature:
        """Keep what a feature installed for as long as the window lives."""
        ...
