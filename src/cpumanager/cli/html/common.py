"""What both pages share: escaping, the holder palette, the page frame."""

from __future__ import annotations

import html

__all__ = ["PALETTE", "RESERVED", "SHARED", "esc", "holder_colour", "page"]

# Holder colours, in order of first appearance: strong hues a reader (and a test reading
# pixels) tells apart; more holders than colours reuse them.
PALETTE: tuple[str, ...] = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#9467bd",
    "#ff7f0e",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#bcbd22",
    "#393b79",
)
RESERVED = "#555555"  # the kubelet's reserved CPUs
SHARED = "#d9ead3"  # the shared pool (the default set)


def esc(text: object) -> str:
    """Text from the node (pod names, paths) made inert in HTML."""
    return html.escape(str(text), quote=True)


def holder_colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def page(title: str, style: str, body: str) -> str:
    """One HTML document with its style inline."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(title)}</title><style>{style}</style></head>\n"
        f"<body>\n{body}\n</body></html>\n"
    )
