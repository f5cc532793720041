"""A small node-link view of one entity's neighbourhood (QGraphicsView).

It draws the `Neighbourhood` that `entity_format.neighbourhood` laid out: the focal entity in
the accent colour at the centre, its linked entities around it, one line per link (wider when
stronger, an arrow head at the target). Clicking a neighbour emits `entity_clicked(id)`.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QMouseEvent,
    QPainter,
    QPen,
    QPolygonF,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QGraphicsEllipseItem,
    QGraphicsItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QGraphicsView,
    QWidget,
)

from signet_desktop.ui.entity_format import Neighbourhood, Node, edge_width, elide
from signet_desktop.ui.style import Theme, current_theme

NODE_RADIUS = 7.0
FOCAL_RADIUS = 10.0
ENTITY_ROLE = 0  # QGraphicsItem.data key holding the entity id


class GraphView(QGraphicsView):
    """The neighbourhood drawing; `entity_clicked` fires for a neighbour node."""

    entity_clicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("entityGraph")
        self.setScene(QGraphicsScene(self))
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setMinimumHeight(200)
        self.shown: Neighbourhood | None = None
        self.node_items: dict[str, QGraphicsEllipseItem] = {}

    def show_neighbourhood(self, graph: Neighbourhood | None) -> None:
        """Redraw for `graph` (None clears)."""
        scene = self.scene()
        scene.clear()
        self.node_items = {}
        self.shown = graph
        if graph is None:
            return
        theme = current_theme()
        at = {node.entity_id: node for node in graph.nodes}
        for edge in graph.edges:
            source, target = at.get(edge.source), at.get(edge.target)
            if source is not None and target is not None:
                self._edge(source, target, edge.strength, theme.muted)
        for node in graph.nodes:
            self._node(node, theme.accent if node.focal else theme.surface, theme)
        if graph.hidden:
            note = scene.addSimpleText(f"+{graph.hidden} more")
            note.setBrush(QBrush(QColor(theme.muted)))
            box = scene.itemsBoundingRect()
            note.setPos(box.right() - note.boundingRect().width(), box.bottom() + 4)
        self._fit()

    def _edge(self, source: Node, target: Node, strength: float, colour: str) -> None:
        pen = QPen(QColor(colour), edge_width(strength))
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        start, end = QPointF(source.x, source.y), QPointF(target.x, target.y)
        dx, dy = end.x() - start.x(), end.y() - start.y()
        length = math.hypot(dx, dy) or 1.0
        ux, uy = dx / length, dy / length
        stop = FOCAL_RADIUS if target.focal else NODE_RADIUS
        tip = QPointF(end.x() - ux * (stop + 2), end.y() - uy * (stop + 2))
        self.scene().addLine(start.x(), start.y(), tip.x(), tip.y(), pen)
        size = 6.0
        left = QPointF(tip.x() - ux * size - uy * size / 2, tip.y() - uy * size + ux * size / 2)
        right = QPointF(tip.x() - ux * size + uy * size / 2, tip.y() - uy * size - ux * size / 2)
        self.scene().addPolygon(
            QPolygonF([tip, left, right]), QPen(QColor(colour), 1), QBrush(QColor(colour))
        )

    def _node(self, node: Node, fill: str, theme: Theme) -> None:
        radius = FOCAL_RADIUS if node.focal else NODE_RADIUS
        item = QGraphicsEllipseItem(QRectF(-radius, -radius, 2 * radius, 2 * radius))
        item.setPos(node.x, node.y)
        accent = QColor(theme.accent)
        item.setPen(QPen(accent, 2))
        item.setBrush(QBrush(QColor(fill)))
        item.setData(ENTITY_ROLE, node.entity_id)
        item.setZValue(2)
        if not node.focal:
            item.setCursor(Qt.CursorShape.PointingHandCursor)
            item.setToolTip(f"{node.label} — click to open")
        self.scene().addItem(item)
        self.node_items[node.entity_id] = item
        label = QGraphicsSimpleTextItem(elide(node.label))
        font = QFont(label.font())
        font.setBold(node.focal)
        label.setFont(font)
        label.setBrush(QBrush(QColor(theme.text)))
        width = label.boundingRect().width()
        below = node.y >= -1
        y = node.y + radius + 3 if below else node.y - radius - 3 - label.boundingRect().height()
        label.setPos(node.x - width / 2, y)
        label.setZValue(3)
        plate = self.scene().addRect(  # keeps a label readable over the lines it crosses
            label.sceneBoundingRect().adjusted(-2, 0, 2, 0),
            QPen(Qt.PenStyle.NoPen),
            QBrush(QColor(theme.surface)),
        )
        plate.setZValue(2.5)
        label.setData(ENTITY_ROLE, node.entity_id)
        label.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable, False)
        self.scene().addItem(label)

    def _fit(self) -> None:
        box = self.scene().itemsBoundingRect().adjusted(-16, -12, 16, 12)
        self.setSceneRect(box)
        self.fitInView(box, Qt.AspectRatioMode.KeepAspectRatio)
        if self.transform().m11() > 1.0:  # never enlarge a small graph past its drawn size
            self.resetTransform()
            self.centerOn(box.center())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self.shown is not None:
            self._fit()

    def entity_at(self, point: QPointF) -> str | None:
        """The neighbour entity under a view point (None for the focal node or empty space)."""
        for item in self.items(point.toPoint()):
            entity_id = item.data(ENTITY_ROLE)
            if isinstance(entity_id, str) and entity_id:
                focal = self.shown is not None and any(
                    n.focal and n.entity_id == entity_id for n in self.shown.nodes
                )
                return None if focal else entity_id
        return None

    def click_node(self, entity_id: str) -> None:
        """Act as if the node of `entity_id` was clicked (tests, keyboard)."""
        focal = self.shown is not None and any(
            n.focal and n.entity_id == entity_id for n in self.shown.nodes
        )
        if entity_id in self.node_items and not focal:
            self.entity_clicked.emit(entity_id)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        entity_id = self.entity_at(event.position())
        if entity_id is not None and event.button() == Qt.MouseButton.LeftButton:
            self.entity_clicked.emit(entity_id)
            event.accept()
            return
        super().mousePressEvent(event)
