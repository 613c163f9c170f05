"""The report page's only script: plotly.js (gzip + base64) and every figure drawn by one loop.

plotly.js is 4.8 MB minified; gzip at level 9 brings it to ~1.4 MB and base64 to ~1.9 MB. The
browser inflates it with ``DecompressionStream`` (Chromium 80+, Firefox 113+, Safari 16.4+),
loads it once through a script element (so it compiles like any script, off the main thread),
then draws the figures in order, each over its static PNG (which it then removes). Errors are
logged to the console (the browser tests fail on any console message).
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Sequence
from functools import cache

from wass_chat.analytics.charts import ChartSpec
from wass_chat.analytics.render_plotly import figure_dict

_LOADER = """
(async () => {
  const packed = document.getElementById("plotly-gz").textContent;
  const blob = await (await fetch("data:application/gzip;base64," + packed)).blob();
  const stream = blob.stream().pipeThrough(new DecompressionStream("gzip"));
  const code = new Blob([await new Response(stream).arrayBuffer()], {type: "text/javascript"});
  // A script element (not eval) lets the browser compile plotly.js off the main thread.
  await new Promise((loaded, failed) => {
    const script = document.createElement("script");
    script.onload = loaded;
    script.onerror = () => failed(new Error("plotly.js did not load"));
    script.src = URL.createObjectURL(code);
    document.head.appendChild(script);
  });
  document.body.dataset.plotlyMs = Math.round(performance.now());
  const figures = JSON.parse(document.getElementById("figures").textContent);
  const config = {responsive: true, displaylogo: false};
  for (const f of figures) {
    await Plotly.newPlot(f.id, f.data, f.layout, config);
    document.querySelector(`#${f.id} > img.static-chart`)?.remove();
  }
  document.body.dataset.drawnMs = Math.round(performance.now());
})().catch((e) => console.error("report charts: " + e));
"""


@cache
def packed_plotly_js() -> str:
    """plotly.js from the installed plotly package, gzip-compressed and base64-encoded."""
    from plotly.offline import get_plotlyjs

    raw = get_plotlyjs().encode()
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")


def figures_json(charts: Sequence[ChartSpec]) -> str:
    """Every chart's figure as one JSON list, safe inside a ``<script>`` element; a chart
    without points is left out (the page says so instead of drawing empty axes)."""
    figures = [{"id": c.id, **figure_dict(c)} for c in charts if c.points]
    return json.dumps(figures, separators=(",", ":")).replace("</", "<\\/")


def charts_script(charts: Sequence[ChartSpec]) -> str:
    """The three script elements: packed plotly.js, the figures, and the loader."""
    return (
        f'<script id="plotly-gz" type="application/octet-stream">{packed_plotly_js()}</script>\n'
        f'<script id="figures" type="application/json">{figures_json(charts)}</script>\n'
        f"<script>{_LOADER}</script>"
    )
