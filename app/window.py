"""MainWindow: puts the pieces together and renders their state. The logic lives in the controllers.

Layout: conversation list | banner, title bar, chat, composer | metrics panel.

Features plug in through its extension points (app/ui/menus.py): menu(MenuId) gives a menu by
id, model_menu takes sections from model sources, and add_feature() keeps what was installed.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Callable, TypeVar

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QHBoxLayout, QMainWindow, QMenu,
    QSplitter, QVBoxLayout, QWidget,
)

from app.chat.announcer import ReplyAnnouncer
from app.chat.controller import ChatController
from app.chat.conversation_model import ConversationFilterModel
from app.chat.widgets.composer import Composer
from app.chat.widgets.conversation_commands import ConversationCommands
from app.chat.widgets.message_view import ChatView
from app.chat.widgets.settings_dialog import ConversationSettingsDialog
from app.chat.widgets.sidebar import Sidebar
from app.metrics.panel import DEFAULT_WIDTH as METRICS_WIDTH
from app.metrics.panel import MetricsPanel
from app.metrics.poller import MetricsPoller
from app.catalog.ui import CatalogUi
from app.features import FeatureContext
from app.models.menu import LocalModelSections
from app.models.status_line import ModelStatus, StatusLine
from app.models.loader import ModelLoader, Prepared
from app.models.local_model import LocalModels
from app.models.session import ModelSession
from app.models.startup import StartupModel
from app.runtime_link import ConnectionState, RuntimeLink
from app.storage import Store
from app.storage.store import StoreUnavailable
from app.storage.unsaved import UnsavedReplies
from app.ui import icons
from app.ui.accessibility import chain
from app.ui.banner import Banner
from app.ui.help_menu import HelpMenu
from app.ui.language.menu import LanguageMenu
from app.ui.menus import MenuId, ModelMenu
from app.ui.top_bar import TopBar
from app.ui.window_state import restore_layout, save_layout
from runtime import protocol
from runtime.protocol import LocalModel

Feature = TypeVar("Feature")
log = logging.getLogger("lokal.window")

class MainWindow(QMainWindow):
    sig_closed = Signal()  # the window closed for good (not hidden to keep serving): the application may end

    def __init__(self, store: Store, link: RuntimeLink, local_models: LocalModels | None = None, autoload: bool = True):
        super().__init__()
        self.setWindowTitle("Lokal")
        self.setWindowIcon(icons.app_icon())
        self.setAcceptDrops(True)
        self.store = store
        self.link = link
        self.local_models = local_models or LocalModels(link, parent=self)
        self.session = ModelSession(link, self, name_of=self.local_models.display_name)
        self.loader = ModelLoader(self.session, self.local_models, self)  # loads with the model's stored load settings
        self.chat = ChatController(store, link, self.session, self)
        self.poller = MetricsPoller(link, self, conversation=lambda: self.chat.current.id if self.chat.current else None)
        self._panel_conversation: str | None = None  # whose figures the metrics panel shows
        self.catalog = CatalogUi(link, self)
        self.startup = StartupModel(store, self.load_model, self.local_models.scan, self)  # the model to start with
        self.menus: dict[MenuId, QMenu] = {}
        self.features: dict[str, object] = {}  # what app/main.py installed (app/remote, app/api, app/kvcache), by name
        self._close_guards: list[Callable[[], bool]] = []
        self._close_confirmed = False
        self.unsaved = UnsavedReplies(store, self)  # the last say before closing: replies only in memory
        self.unsaved.sig_close_again.connect(self.quit_now)
        self._shut_down = False
        self.restart_requested = False  # View ▸ Language ▸ Restart now: app/main.py opens the window again
        self.settings_dialog: ConversationSettingsDialog | None = None
        self.commands = ConversationCommands(self.chat, self)  # rename, delete and undo, export
        self._build()
        self._build_menus()
        self._connect()
        self._restore()
        self._order_focus()
        self.composer.edit.setFocus(Qt.FocusReason.OtherFocusReason)  # where the user starts: typing a message
        self.link.start()
        self.local_models.scan()
        if autoload:
            self.startup.start()

    # ---- building --------------------------------------------------------------
    def _build(self) -> None:
        self.sidebar = Sidebar(ConversationFilterModel(self.chat.conversations, self))
        center = QWidget()
        column = QVBoxLayout(center)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        self.banner = Banner()
        self.banner_text, self.banner_retry, self.banner_close = self.banner.label, self.banner.retry, self.banner.close_button
        self.model_menu = ModelMenu(self.tr("&Model"), self)
        top = TopBar(self.model_menu)
        self.title, self.model_button = top.title, top.model_button
        self.settings_button, self.metrics_button = top.settings_button, top.metrics_button

        self.chat_view = ChatView(self.chat.messages)
        self.announcer = ReplyAnnouncer(self.chat, self.chat_view, self)  # the streaming reply, read out politely
        composer_holder = QWidget()
        composer_row = QHBoxLayout(composer_holder)
        composer_row.setContentsMargins(16, 8, 16, 14)
        self.composer = Composer()
        self.composer.setMaximumWidth(900)
        composer_row.addWidget(self.composer)
        column.addWidget(self.banner)
        column.addWidget(top)
        column.addWidget(self.chat_view, 1)
        column.addWidget(composer_holder)

        self.metrics_panel = MetricsPanel()
        self.splitter = QSplitter()
        self.splitter.addWidget(self.sidebar)
        self.splitter.addWidget(center)
        self.splitter.addWidget(self.metrics_panel)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setStretchFactor(2, 0)
        self.splitter.setSizes([240, 760, METRICS_WIDTH])
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setHandleWidth(1)
        self.setCentralWidget(self.splitter)

        self.status_line = StatusLine(self.statusBar())
        self.model_label, self.load_progress = self.status_line.model_label, self.status_line.load_progress
        self.model_status = ModelStatus(self.status_line, self.model_button, self.session, self.link,
                                        lambda: None if self.chat.local_replies else self.chat.reply_model_name)
        self.resize(1280, 800)
        self._on_state_changed(self.link.state)

    # ---- keyboard --------------------------------------------------------------------
    def focus_order(self) -> list[QWidget]:
        """What Tab visits, in reading order: the conversation list, the banner, the top bar, the messages, the composer."""
        sidebar, composer = self.sidebar, self.composer
        return [
            sidebar.new_button, sidebar.filter, sidebar.list, self.banner_retry, self.banner_close,
            self.model_button, self.settings_button, self.metrics_button,
            self.chat_view, *self.chat_view.focusables(), composer.edit, composer.button,
        ]

    def _order_focus(self) -> None:
        chain(self.focus_order())

    # ---- extension points ---------------------------------------------------------
    def feature_context(self) -> FeatureContext:
        """What features get of this window (app/features.py): app/main.py installs them with it."""
        return self

    def menu(self, menu_id: MenuId) -> QMenu:
        """The window's menu `menu_id`: features add their commands to it."""
        return self.menus[menu_id]

    def add_feature(self, name: str, feature: Feature) -> Feature:
        """Keep a feature that plugged itself in (through menu() and model_menu) for as long as the window lives."""
        self.features[name] = feature
        return feature

    def add_close_guard(self, guard: Callable[[], bool]) -> None:
        """`guard()` runs when the user closes the window: True lets it close; False keeps it open, and the
        guard then asks its question and ends with quit_now(), hiding the window, or nothing (cancelled)."""
        self._close_guards.append(guard)

    def quit_now(self) -> None:
        """Close for good, without asking the guards again (they had their say)."""
        self._close_confirmed = True
        self.close()

    def _add_menu(self, menu_id: MenuId, title: str) -> QMenu:
        menu = self.menus[menu_id] = self.menuBar().addMenu(title)
        return menu

    def _build_menus(self) -> None:
        # Every command has a shortcut, or is reached from the keyboard through its menu (Alt+letter, then arrows).
        file_menu = self._add_menu(MenuId.FILE, self.tr("&File"))
        self.action_new = file_menu.addAction(icons.icon("new-chat"), self.tr("&New chat"), self._on_new)
        self.action_new.setShortcut(QKeySequence.StandardKey.New)
        file_menu.addSeparator()
        self.action_export_md = file_menu.addAction(icons.icon("export"), self.tr("Export as &Markdown…"), lambda: self.commands.export(None, "md"))
        self.action_export_md.setShortcut(QKeySequence("Ctrl+Shift+E"))
        file_menu.addAction(icons.icon("export"), self.tr("Export as &JSON…"), lambda: self.commands.export(None, "json"))
        file_menu.addSeparator()
        quit_action = file_menu.addAction(self.tr("&Quit"), self.close)
        quit_action.setShortcut(QKeySequence("Ctrl+Q"))
        quit_action.setMenuRole(QAction.MenuRole.QuitRole)

        edit_menu = self._add_menu(MenuId.EDIT, self.tr("&Edit"))
        self.action_undo_delete = edit_menu.addAction(self.tr("&Undo delete"), self.commands.undo_delete)
        self.action_undo_delete.setShortcut(QKeySequence.StandardKey.Undo)
        self.action_undo_delete.setEnabled(False)
        edit_menu.addSeparator()
        self.action_rename = edit_menu.addAction(self.tr("&Rename chat…"), self.commands.rename)
        self.action_rename.setShortcut(QKeySequence("F2"))
        self.action_delete = edit_menu.addAction(icons.icon("delete"), self.tr("&Delete chat"), self.commands.delete)
        self.action_delete.setShortcut(QKeySequence("Ctrl+Shift+Backspace"))
        edit_menu.addSeparator()
        self.action_settings = edit_menu.addAction(icons.icon("settings"), self.tr("Conversation &settings…"), self._on_settings)
        self.action_settings.setShortcut(QKeySequence("Ctrl+,"))
        self.action_settings.setMenuRole(QAction.MenuRole.PreferencesRole)

        chat_menu = self._add_menu(MenuId.CHAT, self.tr("&Chat"))
        self.action_stop = chat_menu.addAction(icons.icon("stop"), self.tr("&Stop"), self.chat.stop)
        self.action_stop.setShortcut(QKeySequence("Ctrl+."))
        self.action_regenerate = chat_menu.addAction(icons.icon("regenerate"), self.tr("&Regenerate last reply"), self.chat.regenerate)
        self.action_regenerate.setShortcut(QKeySequence("Ctrl+R"))
        self.action_edit_last = chat_menu.addAction(icons.icon("edit"), self.tr("&Edit last message"), self._on_edit_last)
        self.action_edit_last.setShortcut(QKeySequence("Ctrl+E"))
        chat_menu.addSeparator()
        self.action_focus_composer = chat_menu.addAction(self.tr("&Write a message"), lambda: self.composer.edit.setFocus(Qt.FocusReason.ShortcutFocusReason))
        self.action_focus_composer.setShortcut(QKeySequence("Ctrl+L"))

        self.menuBar().addMenu(self.model_menu)
        self.menus[MenuId.MODEL] = self.model_menu
        self.local_sections = LocalModelSections(self.model_menu, self.local_models, self.loader, self.startup, self.catalog,
                                                 self.link, lambda: self.chat.any_generating, self.load_model, self)
        self.local_sections.sig_problem.connect(self.show_banner)

        view_menu = self._add_menu(MenuId.VIEW, self.tr("&View"))
        self.action_metrics = view_menu.addAction(icons.icon("metrics"), self.tr("&Metrics panel"))
        self.action_metrics.setCheckable(True)
        self.action_metrics.setChecked(True)
        self.action_metrics.setShortcut(QKeySequence("Ctrl+Shift+M"))
        self.action_sidebar = view_menu.addAction(icons.icon("sidebar"), self.tr("&Conversation list"))
        self.action_sidebar.setCheckable(True)
        self.action_sidebar.setChecked(True)
        self.action_sidebar.setShortcut(QKeySequence("Ctrl+Shift+S"))
        view_menu.addSeparator()
        self.language = LanguageMenu(self.store, view_menu.addMenu(self.tr("&Language")), self)
        self.language.sig_restart_requested.connect(self._on_restart_requested)

        self.help = HelpMenu(self._add_menu(MenuId.HELP, self.tr("&Help")), lambda: list(self.menus.values()), lambda: self.link.info, self)

    def _on_restart_requested(self) -> None:
        self.restart_requested = True
        self.close()

    def _connect(self) -> None:
        link, chat, session = self.link, self.chat, self.session
        link.sig_state_changed.connect(self._on_state_changed)
        link.sig_queue_changed.connect(lambda _waiting: self._on_state_changed(self.link.state))
        for signal in (link.sig_crashed, link.sig_ready, session.sig_loading, session.sig_failed):
            signal.connect(lambda *_args: self._update_actions())
        self.loader.sig_prepared.connect(self._on_model_prepared)
        session.sig_loaded.connect(self._on_model_loaded)
        self.model_status.sig_problem.connect(self.show_banner)
        self.local_models.sig_scanned.connect(self.model_menu.rebuild)
        # The models that could draft for it may have changed.
        self.local_models.sig_scanned.connect(lambda: self.loader.refresh(self.chat.settings().n_ctx))
        self.loader.sig_problem.connect(lambda path, reason: self.show_banner(
            self.tr("Could not use the load settings of {file}: {reason}").format(file=os.path.basename(path) or self.tr("the model"), reason=reason)))
        self.loader.sig_context_capped.connect(lambda wanted, fits: self.show_banner(
            self.tr("This conversation's context size ({wanted} tokens) does not fit in this machine's memory: the model is loaded "
                    "with {fits} tokens instead. Change it in Conversation settings.").format(wanted=wanted, fits=fits)))
        self.local_models.sig_scanned.connect(self.model_status.show_model)
        self.local_models.sig_added.connect(self._on_model_file_added)
        self.local_models.sig_add_failed.connect(lambda path, message: self.show_banner(self.tr("Cannot add {file}: {reason}").format(file=Path(path).name, reason=message)))
        self.catalog.sig_model_downloaded.connect(lambda _paths: self.local_models.scan())
        self.startup.sig_status.connect(self.statusBar().showMessage)
        self.startup.sig_progress.connect(self.status_line.show_progress)
        self.startup.sig_fetch_ended.connect(self._on_starter_fetch_ended)
        self.startup.sig_failed.connect(lambda reason: self.show_banner(self.tr("{reason}. Choose a GGUF file from the Model menu.").format(reason=reason)))
        chat.sig_current_changed.connect(self._on_current_changed)
        chat.sig_generating_changed.connect(self._on_generating_changed)
        chat.sig_reply_finished.connect(self._on_reply_finished)
        chat.sig_error.connect(lambda message: self.show_banner(self.tr("The reply failed: {reason}").format(reason=message)))
        chat.sig_reply_link_changed.connect(self._on_reply_link_changed)
        chat.sig_store_problem.connect(self._on_store_problem)
        chat.sig_refused.connect(lambda reason: self.statusBar().showMessage(reason, 5000))
        self.banner_retry.clicked.connect(chat.retry_store)
        self.poller.sig_sample.connect(self.metrics_panel.on_sample)
        self.sidebar.sig_open.connect(chat.open)
        self.sidebar.sig_new.connect(self._on_new)
        self.sidebar.sig_rename.connect(self.commands.rename)
        self.sidebar.sig_delete.connect(self.commands.delete)
        self.sidebar.sig_export.connect(self.commands.export)
        self.commands.sig_status.connect(lambda text, ms: self.show_status(text, ms) if text else self.clear_status())
        self.commands.sig_problem.connect(self.show_banner)
        self.commands.sig_undo_available.connect(self.action_undo_delete.setEnabled)
        self.composer.sig_send.connect(self._on_send)
        self.composer.sig_stop.connect(chat.stop)
        self.chat_view.sig_edit_submitted.connect(self._on_edit_submitted)
        self.chat_view.sig_focus_order_changed.connect(self._order_focus)
        self.chat_view.sig_regenerate_requested.connect(chat.regenerate)
        self.chat_view.sig_show_earlier.connect(chat.show_earlier)
        self.chat_view.sig_copied.connect(lambda _t: self.statusBar().showMessage(self.tr("Copied to the clipboard"), 2000))
        self.settings_button.clicked.connect(self._on_settings)
        self.metrics_button.toggled.connect(self.action_metrics.setChecked)
        self.action_metrics.toggled.connect(self.metrics_button.setChecked)
        self.action_metrics.toggled.connect(self.metrics_panel.setVisible)
        self.action_sidebar.toggled.connect(self.sidebar.setVisible)
        self._update_actions()

    # ---- start and stop --------------------------------------------------------
    def _restore(self) -> None:
        metrics_visible = restore_layout(self.store, self, self.splitter)
        self.action_metrics.setChecked(metrics_visible)
        self.metrics_panel.setVisible(metrics_visible)
        self.chat.open_last()

    def _on_starter_fetch_ended(self) -> None:
        self.statusBar().clearMessage()
        self.status_line.end_progress()

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._close_confirmed and not all(guard() for guard in self._close_guards):
            event.ignore()  # a guard asks first (e.g. whether to keep serving the API)
            return
        self._close_confirmed = False
        if not self.unsaved.may_close():
            event.ignore()  # it asks whether to quit without the replies the database refused, and closes again
            return
        self.shutdown()
        super().closeEvent(event)
        self.sig_closed.emit()

    @property
    def is_shut_down(self) -> bool:
        return self._shut_down

    def bring_to_front(self) -> None:
        """A second launch asked for this window (app/single_instance.py)."""
        if self.isMinimized():
            self.showNormal()
        self.show()
        self.raise_()
        self.activateWindow()

    def shutdown(self) -> None:
        """Save what is on screen and stop the runtime; safe to call twice."""
        if self._shut_down:
            return
        self._shut_down = True
        self.chat.end_all()
        try:
            save_layout(self.store, self, self.splitter, self.action_metrics.isChecked())
        except StoreUnavailable as problem:  # a full disk, say: the rest of the shutdown must still run
            log.warning("the window's layout was not saved: %s", problem)
        self.poller.stop()
        self.local_models.stop()
        self.loader.stop()
        self.startup.stop()
        self.link.close()

    # ---- models -----------------------------------------------------------------
    def load_model(self, path: str) -> None:
        """Load `path` with its stored load settings, and the conversation's own context size if it sets one."""
        self.loader.load(path, self.chat.settings().n_ctx)

    def add_model_file(self, path: str) -> None:
        """A file the user picked or dropped: once the runtime has checked and remembered it, it loads."""
        self.local_models.add_file(path)

    def _on_model_file_added(self, added: LocalModel) -> None:
        self.startup.choose(added.path)

    def dragEnterEvent(self, event) -> None:
        if any(url.toLocalFile().lower().endswith(".gguf") for url in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        paths = [url.toLocalFile() for url in event.mimeData().urls() if url.toLocalFile().lower().endswith(".gguf")]
        if paths:
            event.acceptProposedAction()
            self.add_model_file(paths[0])

    def _on_model_prepared(self, prepared: Prepared) -> None:
        self.chat.model_sampling = prepared.sampling  # new conversations sample as the model's file recommends

    def _on_model_loaded(self, info: protocol.ModelLoadResult) -> None:
        self.metrics_panel.set_draft_model(os.path.basename(info.draft_path) if info.draft_path else "")
        self.model_menu.rebuild()
        self.poller.poll_once()
        self._update_actions()

    # ---- runtime ------------------------------------------------------------------
    def _on_state_changed(self, state: ConnectionState) -> None:
        self.status_line.show_state(state, self.chat.generating, self.link.queued)

    def show_status(self, text: str, timeout_ms: int = 0) -> None:
        self.statusBar().showMessage(text, timeout_ms)

    def clear_status(self) -> None:
        self.statusBar().clearMessage()

    def show_banner(self, text: str) -> None:
        self.banner.say(text)

    def _on_store_problem(self, problem) -> None:
        if problem is None:
            if self.banner_retry.isVisible():
                self.banner.hide()
                self.statusBar().showMessage(self.tr("Saved: the database takes writes again"), 4000)
            return
        waiting = self.store.deferred_writes
        kept = "\n" + self.tr("%n message update(s) are kept until they can be saved.", "", waiting) if waiting else ""
        self.banner.say(f"{problem.message}{kept}", retry=True)

    # ---- chat ------------------------------------------------------------------------
    def _on_current_changed(self, conv) -> None:
        self.title.setText(conv.title if conv else self.tr("New chat"))
        self.setWindowTitle(f"{conv.title} — Lokal" if conv else "Lokal")
        self.sidebar.select(conv.id if conv else None)
        self._follow_in_metrics_panel(conv)
        self._update_actions()

    def _follow_in_metrics_panel(self, conv) -> None:
        """The metrics panel shows the conversation on screen: its reply streaming now, else its last reply's
        figures as they were stored, never another conversation's."""
        conversation_id = conv.id if conv else None
        if conversation_id == self._panel_conversation:
            return
        self._panel_conversation = conversation_id
        if self.chat.generating:
            self.metrics_panel.on_turn_started()
            if self.chat.local_replies:
                self.poller.start()
            return
        last = self.chat.last_reply()
        self.metrics_panel.show_conversation(last.stats if last is not None else None)
        if self.chat.local_replies and self.session.loaded is not None:
            self.poller.poll_once()  # its context and the memory now

    def _on_generating_changed(self, generating: bool) -> None:
        self.composer.set_generating(generating)
        self.chat_view.set_generating(generating)
        self._order_focus()  # parts of the reply made while it streamed (code blocks) take their place
        if generating:
            self.metrics_panel.on_turn_started()
            if self.chat.local_replies:  # the runtime knows nothing of a remote reply: its figures come with the reply
                self.poller.start()
        else:
            self.poller.stop()
        self._on_state_changed(self.link.state)
        self._update_actions()

    def _on_reply_finished(self, message) -> None:
        self.metrics_panel.on_turn_finished(message.stats)
        if self.chat.local_replies:
            self.poller.poll_once()  # context and KV figures after the turn

    def _on_reply_link_changed(self) -> None:
        self.model_status.show_reply_model()
        self._update_actions()

    def _update_actions(self) -> None:
        has_conv = self.chat.current is not None
        self.action_stop.setEnabled(self.chat.generating)
        self.action_regenerate.setEnabled(self.chat.can_regenerate())
        self.action_edit_last.setEnabled(self.chat.can_edit_last())
        self.action_rename.setEnabled(has_conv)
        self.action_delete.setEnabled(has_conv)
        if self.chat.needs_model:
            self.composer.set_can_send(False, self.tr("Choose a model first (Model menu)"))
        else:
            self.composer.set_can_send(True)

    def _on_send(self, text: str) -> None:
        if self.chat.send(text):
            self.composer.sent()

    def _on_new(self) -> None:
        self.chat.new_conversation()
        self.composer.edit.setFocus()

    def _on_edit_submitted(self, row: int, text: str) -> None:
        """Enter in a message's editor: the message changes and the replies after it are written again."""
        if self.chat.edit_and_resend(row, text):
            self.chat_view.stop_editing()
            self.composer.edit.setFocus()

    def _on_edit_last(self) -> None:
        if self.chat.can_edit_last():
            self.chat_view.edit_last_user_message()

    def _on_settings(self) -> ConversationSettingsDialog:
        conv = self.chat.current
        dialog = ConversationSettingsDialog(conv.system_prompt if conv else "", self.chat.settings(), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self.chat.set_settings(*dialog.result_settings()))
        dialog.open()  # window-modal, without a nested event loop
        self.settings_dialog = dialog
        return dialog
