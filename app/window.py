"""MainWindow: puts the pieces together and renders their state. The logic lives in the controllers.

Layout: conversation list | banner, title bar, chat, composer | metrics panel.

Features plug in through its extension points (app/ui/menus.py): menu(MenuId) gives a menu by
id, model_menu takes sections from model sources, and add_feature() keeps what was installed.
"""

from __future__ import annotations

import logging
import os
from typing import Callable, TypeVar

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu, QWidget

from app.attachments.service import Attacher
from app.chat.announcer import ReplyAnnouncer
from app.chat.controller import ChatController
from app.chat.conversation_model import ConversationFilterModel
from app.chat.view_wiring import make_message_meter, wire_chat_view, wire_message_meter, wire_welcome
from app.chat.widgets.composer import Composer
from app.chat.widgets.conversation_commands import ConversationCommands
from app.chat.widgets.message_view import ChatView
from app.chat.widgets.settings_dialog import ConversationSettingsDialog
from app.chat.widgets.sidebar import Sidebar
from app.metrics.panel import DEFAULT_WIDTH as METRICS_WIDTH
from app.metrics.panel import MetricsPanel
from app.metrics.follow import PanelFollower
from app.metrics.poller import MetricsPoller
from app.catalog.ui import CatalogUi
from app.features import FeatureContext
from app.models.file_drop import ModelFileDrop
from app.models.menu import LocalModelSections
from app.models.status_line import ModelStatus, StatusLine
from app.models.loader import ModelLoader, Prepared
from app.models.local_model import LocalModels
from app.models.session import ModelSession
from app.models.startup import StartupModel
from app.runtime_link import ConnectionState, RuntimeLink
from app.storage import Store
from app.storage.store import Conversation, StoreUnavailable
from app.storage.unsaved import UnsavedReplies
from app.ui import icons
from app.ui.accessibility import chain
from app.ui.banner import Banner
from app.ui.closing import CloseGuards
from app.ui.help_menu import HelpMenu
from app.ui.language.menu import LanguageMenu
from app.ui.layout import ThreePanes, center_column
from app.ui.menus import MenuId, ModelMenu, add_command
from app.ui.top_bar import TopBar
from app.ui.window_state import restore_layout, save_layout
from runtime import protocol

Feature = TypeVar("Feature")
log = logging.getLogger("lokal.window")


class MainWindow(QMainWindow):
    sig_closed = Signal()  # the window closed for good (not hidden to keep serving): the application may end

    def __init__(self, store: Store, link: RuntimeLink, local_models: LocalModels | None = None, autoload: bool = True):
        super().__init__()
        self.setWindowTitle("Lokal")
        self.setWindowIcon(icons.app_icon())
        self.store = store
        self.link = link
        self.local_models = local_models or LocalModels(link, parent=self)
        self.model_file_drop = ModelFileDrop(self, self.local_models)
        self.session = ModelSession(link, self, name_of=self.local_models.display_name)
        self.loader = ModelLoader(self.session, self.local_models, self)  # loads with the model's stored load settings
        self.chat = ChatController(store, link, self.session, self)
        self.poller = MetricsPoller(link, self, conversation=lambda: self.chat.current.id if self.chat.current else None)
        self.catalog = CatalogUi(link, self)
        self.startup = StartupModel(store, self.load_model, self.local_models.scan, self)  # the model to start with
        self.menus: dict[MenuId, QMenu] = {}
        self.features: dict[str, object] = {}  # what app/main.py installed (app/remote, app/api, app/kvcache), by name
        self.unsaved = UnsavedReplies(store, self)  # the last say before closing: replies only in memory
        self.unsaved.sig_close_again.connect(self.quit_now)
        self.close_guards = CloseGuards(last_say=self.unsaved.may_close)
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
        self.banner = Banner()
        self.banner_text, self.banner_retry, self.banner_close = self.banner.label, self.banner.retry, self.banner.close_button
        self.model_menu = ModelMenu(self.tr("&Model"), self)
        top = TopBar(self.model_menu)
        self.title, self.model_button = top.title, top.model_button
        self.settings_button, self.metrics_button = top.settings_button, top.metrics_button
        self.chat_view = ChatView(self.chat.messages, image_source=self.store.image_bytes)
        self.announcer = ReplyAnnouncer(self.chat, self.chat_view, self)  # the streaming reply, read out politely
        self.attacher = Attacher(self.link, self.store, self)  # the files on the message being written (app/attachments)
        self.composer = Composer(self.attacher)
        self.message_meter = make_message_meter(self.link, self.composer, self.chat, self.session, self)
        self.metrics_panel = MetricsPanel()
        self.metrics_follow = PanelFollower(self.metrics_panel, self.poller, self.chat, lambda: self.session.loaded is not None)
        center = center_column(self.banner, top, self.chat_view, self.composer)
        self.splitter = ThreePanes(self.sidebar, center, self.metrics_panel, METRICS_WIDTH)
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
            self.chat_view, *self.chat_view.focusables(), *composer.focusables(),
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
        self.close_guards.add(guard)

    def quit_now(self) -> None:
        """Close for good, without asking the guards again (they had their say)."""
        self.close_guards.confirm()
        self.close()

    def _add_menu(self, menu_id: MenuId, title: str) -> QMenu:
        menu = self.menus[menu_id] = self.menuBar().addMenu(title)
        return menu

    def _build_menus(self) -> None:
        file_menu = self._add_menu(MenuId.FILE, self.tr("&File"))
        self.action_new = add_command(file_menu, self.tr("&New chat"), self._on_new, QKeySequence.StandardKey.New, "new-chat")
        file_menu.addSeparator()
        self.action_export_md = add_command(file_menu, self.tr("Export as &Markdown…"), lambda: self.commands.export(None, "md"), "Ctrl+Shift+E", "export")
        add_command(file_menu, self.tr("Export as &JSON…"), lambda: self.commands.export(None, "json"), icon="export")
        file_menu.addSeparator()
        add_command(file_menu, self.tr("&Quit"), self.close, "Ctrl+Q").setMenuRole(QAction.MenuRole.QuitRole)

        edit_menu = self._add_menu(MenuId.EDIT, self.tr("&Edit"))
        self.action_undo_delete = add_command(edit_menu, self.tr("&Undo delete"), self.commands.undo_delete, QKeySequence.StandardKey.Undo)
        self.action_undo_delete.setEnabled(False)
        edit_menu.addSeparator()
        self.action_rename = add_command(edit_menu, self.tr("&Rename chat…"), self.commands.rename, "F2")
        self.action_delete = add_command(edit_menu, self.tr("&Delete chat"), self.commands.delete, "Ctrl+Shift+Backspace", "delete")
        edit_menu.addSeparator()
        self.action_settings = add_command(edit_menu, self.tr("Conversation &settings…"), self._on_settings, "Ctrl+,", "settings")
        self.action_settings.setMenuRole(QAction.MenuRole.PreferencesRole)

        chat_menu = self._add_menu(MenuId.CHAT, self.tr("&Chat"))
        self.action_stop = add_command(chat_menu, self.tr("&Stop"), self.chat.stop, "Ctrl+.", "stop")
        self.action_regenerate = add_command(chat_menu, self.tr("&Regenerate last reply"), self.chat.regenerate, "Ctrl+R", "regenerate")
        self.action_edit_last = add_command(chat_menu, self.tr("&Edit last message"), self._on_edit_last, "Ctrl+E", "edit")
        chat_menu.addSeparator()
        add_command(chat_menu, self.tr("&Write a message"), lambda: self.composer.edit.setFocus(Qt.FocusReason.ShortcutFocusReason), "Ctrl+L")
        add_command(chat_menu, self.tr("&Paste as text in the message"), self.composer.paste_as_text, "Ctrl+Shift+V")

        self.menuBar().addMenu(self.model_menu)
        self.menus[MenuId.MODEL] = self.model_menu
        self.local_sections = LocalModelSections(self.model_menu, self.local_models, self.loader, self.startup, self.catalog,
                                                 self.link, lambda: self.chat.any_generating, self.load_model, self)
        self.local_sections.sig_problem.connect(self.show_banner)

        view_menu = self._add_menu(MenuId.VIEW, self.tr("&View"))
        self.action_metrics = add_command(view_menu, self.tr("&Metrics panel"), None, "Ctrl+Shift+M", "metrics", checkable=True)
        self.action_sidebar = add_command(view_menu, self.tr("&Conversation list"), None, "Ctrl+Shift+S", "sidebar", checkable=True)
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
        # The models that could draft for it may have changed.
        self.local_models.sig_scanned.connect(lambda: self.loader.refresh(self.chat.settings().n_ctx))
        self.local_models.sig_scanned.connect(self.model_status.show_model)
        self.startup.sig_status.connect(self.statusBar().showMessage)
        self.startup.sig_progress.connect(self.status_line.show_progress)
        self.startup.sig_fetch_ended.connect(self.clear_status)
        self.startup.sig_fetch_ended.connect(self.status_line.end_progress)
        self.startup.sig_failed.connect(lambda reason: self.show_banner(self.tr("{reason}. Choose a GGUF file from the Model menu.").format(reason=reason)))
        chat.sig_current_changed.connect(self._on_current_changed)
        chat.sig_generating_changed.connect(self._on_generating_changed)
        chat.sig_reply_finished.connect(self.metrics_follow.reply_finished)
        chat.sig_path_changed.connect(self.metrics_follow.path_changed)
        chat.sig_error.connect(lambda reason, conv_id: self.banner.say(self.tr("The reply failed: {reason}").format(reason=reason), about=conv_id))
        chat.sig_current_changed.connect(lambda conv: self.banner.leave(conv.id if conv else None))
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
        self.composer.sig_note.connect(lambda text: self.show_status(text, 8000))
        self.composer.sig_focus_order_changed.connect(self._order_focus)
        wire_message_meter(self.message_meter, self.composer, chat, session)
        self.chat_view.sig_edit_submitted.connect(self._on_edit_submitted)
        self.chat_view.sig_focus_order_changed.connect(self._order_focus)
        wire_chat_view(self.chat_view, chat)
        wire_welcome(self.chat_view.welcome, session, self.startup, chat, self.composer, self.catalog.open_browser)
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

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.close_guards.may_close():
            event.ignore()  # a question is asked first (keep serving the API? quit without the unsaved replies?)
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

    def _on_model_prepared(self, prepared: Prepared) -> None:
        self.chat.model_sampling = prepared.sampling  # new conversations sample as the model's file recommends

    def _on_model_loaded(self, info: protocol.ModelLoadResult) -> None:
        self.metrics_panel.set_draft_model(os.path.basename(info.draft_path) if info.draft_path else "")
        self.metrics_panel.set_parallel_asked(self.session.wanted.n_seq if self.session.wanted is not None else 0)
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

    def add_status_widget(self, widget: QWidget) -> None:
        self.status_line.add_lasting(widget)

    def show_banner(self, text: str) -> None:
        self.banner.say(text)

    def _on_store_problem(self, problem: StoreUnavailable | None) -> None:
        if self.banner.say_store_problem(problem, self.store.deferred_writes):
            self.statusBar().showMessage(self.tr("Saved: the database takes writes again"), 4000)

    # ---- chat ------------------------------------------------------------------------
    def _on_current_changed(self, conv: Conversation | None) -> None:
        self.title.setText(conv.title if conv else self.tr("New chat"))
        self.setWindowTitle(f"{conv.title} — Lokal" if conv else "Lokal")
        self.sidebar.select(conv.id if conv else None)
        self.metrics_follow.conversation_changed(conv)
        self._update_actions()

    def _on_generating_changed(self, generating: bool) -> None:
        self.composer.set_generating(generating)
        self.chat_view.set_generating(generating)
        self._order_focus()  # parts of the reply made while it streamed (code blocks) take their place
        self.metrics_follow.generating_changed(generating)
        self._on_state_changed(self.link.state)
        self._update_actions()

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
        if self.chat.send(text, self.attacher.take()):
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
