"""The Entities pane: what the knowledge graph knows, one entity at a time.

Left, the agent's entities (search by name or alias, filter by type and status, counts);
right, the selected entity's page: its type, status, aliases and provenance, a node-link view
of its neighbourhood (click a neighbour to open it), its links both ways (type, strength;
activate one to open the other end), its aspects with their claims — current first, then the
superseded and archived versions — and the memories that mention it with their provenance
(activate one to open that memory). Everything is read through `service.knowledge` off the GUI
thread (one list read at a time; the newest page asked for wins) and read again when a graph
or memory event of this agent arrives; nothing polls.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any, Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QWidget,
)

from signet_desktop.domain.knowledge import EntityDetail, EntityPage, KnowledgeStats
from signet_desktop.ui import entity_format as fmt
from signet_desktop.ui.graph_view import GraphView
from signet_desktop.ui.pane import PaneContext, PaneSpec
from signet_desktop.ui.pane_frame import Frame, FramedPane, error_text
from signet_desktop.ui.style import current_theme
from signet_desktop.ui.widgets import (
    add_row,
    hbox,
    select_quietly,
    single_shot,
    split,
    text_label,
    vbox,
)

REFRESH_DELAY_MS = 300
SEARCH_DELAY_MS = 200
LIST_LIMIT = 200
LIST_MIN_WIDTH = 220  # the entity page beside it keeps ~560 px in a 1024-wide window
EVENT_PREFIXES = ("knowledge.", "ontology.", "dream.pass_finished", "pass.reverted")
MEMORY_EVENTS = ("memory.created", "memory.deleted", "memory.recovered")
EMPTY_TITLE = "No entities yet"
EMPTY_HINT = (
    "Entities are the people, systems and projects your memories are about. An agent creates "
    "them by remembering with a structured block (entities, aspects and claims), and Dreaming "
    "passes create them from your agent's transcripts (see the Dreaming pane). Once one "
    "exists, every new memory that names it is linked here."
)
UNAVAILABLE = "This build has no knowledge graph service, so there are no entities to show."
NO_MATCH = "No entity matches — try another name or clear the filters."
FRAME = Frame(
    title="Entities",
    name="entity",
    empty_title=EMPTY_TITLE,
    empty_hint=EMPTY_HINT,
    refresh_on=(*EVENT_PREFIXES, *MEMORY_EVENTS),
    refresh_ms=REFRESH_DELAY_MS,
)
Snapshot = tuple[EntityPage, KnowledgeStats | None]


class KnowledgeReads(Protocol):
    """What the pane reads from `service.knowledge`."""

    def list_entities(
        self,
        agent_id: str,
        *,
        query: str | None = ...,
        entity_type: str | None = ...,
        status: str | None = ...,
        limit: int = ...,
        offset: int = ...,
    ) -> EntityPage: ...

    def get_entity(self, agent_id: str, entity_id: str) -> EntityDetail: ...

    def stats(self, agent_id: str) -> KnowledgeStats: ...


class EntityRow(QWidget):
    """One entity in the list: bold name, muted `type · mentions` line."""

    def __init__(self, name: str, meta: str) -> None:
        super().__init__()
        self.name = QLabel(f"<b>{html.escape(name, quote=False)}</b>")
        self.meta = QLabel(meta)
        self.meta.setProperty("role", "muted")
        vbox(self.name, self.meta, parent=self, margins=(8, 5, 8, 5), spacing=1)


class MentionItem(QWidget):
    """One mentioning memory: its excerpt, and its provenance below in muted text."""

    def __init__(self, row: fmt.MentionRow) -> None:
        super().__init__()
        self.excerpt = QLabel(html.escape(row.excerpt, quote=False))
        self.excerpt.setWordWrap(True)
        if row.deleted:
            self.excerpt.setProperty("role", "muted")
        self.meta = QLabel(row.provenance)
        self.meta.setProperty("role", "muted")
        vbox(self.excerpt, self.meta, parent=self, margins=(8, 6, 8, 6), spacing=2)


class EntitiesPane(FramedPane):
    """The entity list and one entity's page."""

    def __init__(self, context: PaneContext) -> None:
        super().__init__(context, FRAME)
        self.setObjectName("entitiesPane")
        self.knowledge: KnowledgeReads | None = getattr(context.service, "knowledge", None)
        self.page: EntityPage | None = None
        self.stats: KnowledgeStats | None = None
        self.detail: EntityDetail | None = None
        self.listed: list[str] = []
        self._wanted: str | None = None
        self._search_timer = single_shot(self, SEARCH_DELAY_MS, self.refresh)
        self._build()

    # -- layout ----------------------------------------------------------------------------

    def _build(self) -> None:
        self.search = QLineEdit()
        self.search.setObjectName("entitySearch")
        self.search.setPlaceholderText("Find an entity by name or alias…")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(lambda _t: self._search_timer.start())
        self.type_filter = QComboBox()
        self.type_filter.setObjectName("entityTypeFilter")
        self.type_filter.setMinimumWidth(150)
        self.type_filter.addItem("All types", None)
        self.status_filter = QComboBox()
        self.status_filter.setObjectName("entityStatusFilter")
        for label, value in fmt.STATUS_CHOICES:
            self.status_filter.addItem(label, value)
        for combo in (self.type_filter, self.status_filter):
            combo.currentIndexChanged.connect(lambda _i: self.refresh())
        self.stats_label = text_label("", name="entityStats", role="muted")
        filters = hbox((self.search, 2), self.type_filter, self.status_filter)
        filters.addSpacing(12)
        filters.addWidget(self.stats_label, 1, Qt.AlignmentFlag.AlignRight)
        self.list = QListWidget()
        self.list.setObjectName("entityList")
        self.list.setMinimumWidth(LIST_MIN_WIDTH)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.currentRowChanged.connect(self._on_row)
        self.no_match = text_label(NO_MATCH, name="entityNoMatch", role="muted", wrap=True)
        self.no_match.hide()
        left = QWidget()
        vbox(self.no_match, (self.list, 1), parent=left, margins=(0, 0, 0, 0))
        self.splitter = split(left, self._page(), stretch=(2, 5), sizes=[LIST_MIN_WIDTH + 20, 720])
        content = QWidget()
        vbox(filters, (self.splitter, 1), parent=content, margins=(0, 0, 0, 0))
        self.frame_layout(content)

    def _page(self) -> QWidget:
        box = QWidget()
        box.setObjectName("entityPage")
        self.heading = text_label("Select an entity", role="heading", wrap=True)
        self.meta = text_label("", name="entityMeta", wrap=True)
        self.provenance = text_label("", name="entityProvenance", role="muted", wrap=True)
        self.description = text_label("", name="entityDescription", wrap=True)
        self.description.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.graph = GraphView()
        self.graph.entity_clicked.connect(self.select_entity)
        self.links = self._tree("entityLinks", ("", "Type", "Entity", "Strength", "Details"))
        self.links.setRootIsDecorated(False)
        self.links.itemActivated.connect(self._open_link)
        self.links_label = QLabel("Links")
        self.links_label.setProperty("role", "muted")
        links_box = QWidget()
        vbox(self.links_label, (self.links, 1), parent=links_box, margins=(0, 0, 0, 0), spacing=4)
        top = split(self.graph, links_box, stretch=(2, 3), sizes=[300, 420])
        self.claims = self._tree("entityClaims", ("Claim", "Status", "Version", "Details"))
        self.claims.itemActivated.connect(self._open_claim_memory)
        self.mentions = QListWidget()
        self.mentions.setObjectName("entityMentions")
        self.mentions.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.mentions.itemActivated.connect(self._open_mention)
        self.mentions_label = QLabel("")
        self.mentions_label.setProperty("role", "muted")
        mentions_box = QWidget()
        vbox(self.mentions_label, (self.mentions, 1), parent=mentions_box, margins=(0, 4, 0, 0))
        self.tabs = QTabWidget()
        self.tabs.setObjectName("entityTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.claims, "Aspects and claims")
        self.tabs.addTab(mentions_box, "Mentions")
        body = split(top, self.tabs, stretch=(2, 3), sizes=[230, 330], vertical=True)
        column = vbox(
            self.heading,
            self.meta,
            self.provenance,
            self.description,
            parent=box,
            margins=(12, 0, 0, 0),
            spacing=4,
        )
        column.addSpacing(4)
        column.addWidget(body, 1)
        self.page_box = box
        self._show_detail(None)
        return box

    def _tree(self, name: str, columns: tuple[str, ...]) -> QTreeWidget:
        tree = QTreeWidget()
        tree.setObjectName(name)
        tree.setHeaderLabels(list(columns))
        tree.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        tree.setUniformRowHeights(True)
        header = tree.header()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        return tree

    # -- the PaneWidget hooks --------------------------------------------------------------

    def reveal(self, **reveal: Any) -> None:
        """`entity_id=…`: open that entity (the Recall pane's traversal link, other panes)."""
        self.open_revealed(reveal.get("entity_id"), self.select_entity)

    def shutdown(self) -> None:
        self._search_timer.stop()
        super().shutdown()

    # -- reading ---------------------------------------------------------------------------

    def unavailable(self) -> tuple[str, str] | None:
        return ("No knowledge graph", UNAVAILABLE) if self.knowledge is None else None

    def filters(self) -> tuple[str | None, str | None, str | None]:
        """The search text (None when blank), type and status chosen."""
        text = self.search.text().strip() or None
        return text, self.type_filter.currentData(), self.status_filter.currentData()

    def reader(self) -> Callable[[], Snapshot]:
        knowledge, agent = self.knowledge, self.context.agent_id
        assert knowledge is not None
        query, kind, status = self.filters()

        def read() -> Snapshot:
            page = knowledge.list_entities(
                agent, query=query, entity_type=kind, status=status, limit=LIST_LIMIT, offset=0
            )
            return page, knowledge.stats(agent)

        return read

    def show_snapshot(self, snapshot: Snapshot) -> None:
        page, stats = snapshot
        self.page, self.stats = page, stats
        filtered = any(value is not None for value in self.filters()[:2])
        filtered = filtered or self.status_filter.currentData() != "active"
        nothing = page.total == 0 and not filtered
        self.show_listing(nothing, fmt.count_text(page, filtered))
        self.stats_label.setText(fmt.stats_text(stats) if stats is not None else "")
        self._set_types(stats)
        self.no_match.setVisible(not page.items and not nothing)
        self._fill_list(page)

    def _set_types(self, stats: KnowledgeStats | None) -> None:
        choices = fmt.type_choices(stats)
        combo = self.type_filter
        known = [(combo.itemText(i), combo.itemData(i)) for i in range(combo.count())]
        if choices == known:
            return
        current = self.type_filter.currentData()
        self.type_filter.blockSignals(True)
        self.type_filter.clear()
        for label, value in choices:
            self.type_filter.addItem(label, value)
        index = self.type_filter.findData(current)
        if index < 0 and current is not None:
            self.type_filter.addItem(f"{current} (0)", current)  # keep a choice with no rows
            index = self.type_filter.count() - 1
        self.type_filter.setCurrentIndex(max(0, index))
        self.type_filter.blockSignals(False)

    def _fill_list(self, page: EntityPage) -> None:
        ids = [e.id for e in page.items]
        selected = self._wanted or (self.detail.entity.id if self.detail else None)
        if ids != self.listed:
            scroll = self.list.verticalScrollBar().value()
            self.list.blockSignals(True)
            self.list.clear()
            for entity in page.items:
                meta = fmt.entity_meta(
                    entity.entity_type, entity.mentions, entity.status, entity.pinned
                )
                row = EntityRow(entity.name, meta)
                add_row(self.list, row, entity.id, row.sizeHint())
            self.list.blockSignals(False)
            self.list.verticalScrollBar().setValue(scroll)
            self.listed = ids
        if selected in ids:
            select_quietly(self.list, ids.index(selected))
            self._load_detail(str(selected))
        elif selected is not None:
            self._load_detail(selected)  # opened from elsewhere, or filtered out of the list
        elif ids:
            self.list.setCurrentRow(0)

    def _on_row(self, row: int) -> None:
        if 0 <= row < len(self.listed):
            self.select_entity(self.listed[row])

    def select_entity(self, entity_id: str) -> None:
        """Open `entity_id`'s page (a click on the graph, a link, a list row, `reveal`)."""
        if entity_id in self.listed:
            select_quietly(self.list, self.listed.index(entity_id))
        else:
            self.list.clearSelection()
        self._load_detail(entity_id)

    def _load_detail(self, entity_id: str) -> None:
        knowledge, agent = self.knowledge, self.context.agent_id
        if knowledge is None:
            return
        self._wanted = entity_id

        def shown(detail: EntityDetail) -> None:
            if detail.entity.id == self._wanted:  # a later selection wins
                self._show_detail(detail)

        def failed(exc: BaseException) -> None:
            if self._wanted == entity_id:
                self._wanted = None
                self._show_detail(None)
                self.banner.show_message(f"The entity could not be read: {error_text(exc)}")

        self.context.tasks.call(knowledge.get_entity, agent, entity_id, done=shown, failed=failed)

    # -- the entity page -------------------------------------------------------------------

    def _show_detail(self, detail: EntityDetail | None) -> None:
        self.detail = detail
        self.claims.clear()
        self.links.clear()
        self.mentions.clear()
        self.page_box.setEnabled(detail is not None)
        if detail is None:
            self.heading.setText("Select an entity")
            for label in (self.meta, self.provenance, self.description):
                label.setText("")
            self.description.hide()
            self.graph.show_neighbourhood(None)
            self.tabs.setTabText(0, "Aspects and claims")
            self.tabs.setTabText(1, "Mentions")
            self.links_label.setText("Links")
            self.mentions_label.setText("")
            return
        theme = current_theme()
        entity = detail.entity
        self.heading.setText(entity.name)
        self.meta.setText(fmt.detail_meta(detail))
        colour = theme.text if entity.status == "active" else theme.warn
        self.meta.setStyleSheet(f"color: {colour};")
        self.provenance.setText(fmt.provenance_text(detail))
        self.description.setText(entity.description or "")
        self.description.setVisible(bool(entity.description))
        self.graph.show_neighbourhood(fmt.neighbourhood(detail))
        self._fill_links(detail)
        self._fill_claims(detail)
        self._fill_mentions(detail)

    def _fill_links(self, detail: EntityDetail) -> None:
        rows = fmt.dependency_rows(detail)
        out = sum(1 for r in rows if r.direction == "out")
        self.links_label.setText(
            f"Links · {out} out, {len(rows) - out} in" if rows else "No links to other entities"
        )
        muted = QBrush(QColor(current_theme().muted))
        for row in rows:
            arrow = "→" if row.direction == "out" else "←"
            cells = [arrow, row.link_type, row.other_name, f"{row.strength:.2f}", row.meta]
            item = QTreeWidgetItem(cells)
            item.setData(0, Qt.ItemDataRole.UserRole, row.other_id)
            tip = "this entity → " if row.direction == "out" else "→ this entity from "
            item.setToolTip(2, f"{row.text} ({tip.strip()}) — Enter or double-click to open")
            item.setTextAlignment(3, Qt.AlignmentFlag.AlignRight)
            item.setForeground(4, muted)
            item.setForeground(0, muted)
            item.setForeground(1, muted)
            self.links.addTopLevelItem(item)

    def _fill_claims(self, detail: EntityDetail) -> None:
        theme = current_theme()
        blocks = fmt.aspect_blocks(detail)
        current = sum(1 for b in blocks for r in b.rows if not r.history)
        self.tabs.setTabText(0, f"Aspects and claims ({current})" if blocks else "No aspects yet")
        status_colour = {"active": theme.ok, "superseded": theme.muted, "archived": theme.warn}
        bold = QFont(self.claims.font())
        bold.setBold(True)
        for block in blocks:
            top = QTreeWidgetItem([block.name, "", "", block.summary])
            top.setFont(0, bold)
            top.setForeground(3, QBrush(QColor(theme.muted)))
            top.setFirstColumnSpanned(False)
            self.claims.addTopLevelItem(top)
            for row in block.rows:
                child = QTreeWidgetItem([row.text, row.status, row.version, row.meta])
                child.setData(0, Qt.ItemDataRole.UserRole, row.memory_id)
                child.setToolTip(0, row.text)
                child.setForeground(1, QBrush(QColor(status_colour.get(row.status, theme.muted))))
                child.setForeground(3, QBrush(QColor(theme.muted)))
                if row.history:
                    font = QFont(self.claims.font())
                    font.setStrikeOut(row.status == "superseded")
                    child.setFont(0, font)
                    child.setForeground(0, QBrush(QColor(theme.muted)))
                top.addChild(child)
            top.setExpanded(True)
        self.claims.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        self.claims.setColumnWidth(0, 300)

    def _fill_mentions(self, detail: EntityDetail) -> None:
        rows = [fmt.mention_row(m) for m in detail.mentions]
        self.tabs.setTabText(1, f"Mentions ({detail.mention_total:,})")
        self.mentions_label.setText(
            fmt.mentions_heading(detail) + " · Enter or double-click opens the memory"
            if rows
            else "No memory mentions this entity yet."
        )
        for row in rows:
            widget = MentionItem(row)
            width = max(self.mentions.viewport().width() - 8, 320)
            widget.excerpt.setFixedWidth(width - 16)
            add_row(self.mentions, widget, row.memory_id, widget.sizeHint())

    # -- navigation ------------------------------------------------------------------------

    def _open_link(self, item: QTreeWidgetItem) -> None:
        other = item.data(0, Qt.ItemDataRole.UserRole)
        if isinstance(other, str) and other:
            self.select_entity(other)

    def _open_mention(self, item: QListWidgetItem) -> None:
        self.context.navigator.open_memory(str(item.data(Qt.ItemDataRole.UserRole)))

    def _open_claim_memory(self, item: QTreeWidgetItem) -> None:
        memory_id = item.data(0, Qt.ItemDataRole.UserRole)
        if isinstance(memory_id, str) and memory_id:
            self.context.navigator.open_memory(memory_id)

    def open_mention(self, row: int) -> None:
        """Open the memory of the `row`th mention (tests, keyboard)."""
        item = self.mentions.item(row)
        if item is not None:
            self._open_mention(item)


PANE = PaneSpec(
    key="entities",
    title="Entities",
    icon="entities.svg",
    order=40,
    factory=EntitiesPane,
    shortcut="Ctrl+4",
)
