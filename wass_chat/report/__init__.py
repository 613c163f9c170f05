"""The scheduling audit report: one self-contained HTML file (or Markdown + PNGs) per period."""
