package reports

import (
	"encoding/json"
	"fmt"
	"html/template"
	"slices"

	"github.com/dedupsim/dedupsim/metrics"
)

// ReviewCurvePoint is the first seed's exact curve at one delay: the
// rates and false drops by cause at every point; the peak state and each
// provider's executor memory where the pass tracked the state (the plan's
// grid), null elsewhere.
type ReviewCurvePoint struct {
	DelaySeconds      float64                 `json:"delaySeconds"`
	MissedRate        float64                 `json:"missedRate"`
	FalseDropRate     float64                 `json:"falseDropRate"`
	FalseDropsByCause metrics.FalseDropCauses `json:"falseDropsByCause"`
	PeakStateRows     *int64                  `json:"peakStateRows,omitempty"`
	PeakStateBytes    *int64                  `json:"peakStateBytes,omitempty"`
	// ExecutorMemoryBytes holds, for each provider of Review.Cluster in
	// its order, the executor's peak state memory at this delay
	// (Review.CurveMemory says how it is estimated).
	ExecutorMemoryBytes []int64 `json:"executorMemoryBytes,omitempty"`
}

// curveData is what the page's script reads: the points and what the
// chart marks on them.
type curveData struct {
	Points []ReviewCurvePoint `json:"points"`
	// MaxMissedRate, MaxFalseDropRate and MemoryBudgetBytes are the
	// targets (0: none); PickSeconds the recommended delay (null: none).
	MaxMissedRate     float64   `json:"maxMissedRate"`
	MaxFalseDropRate  float64   `json:"maxFalseDropRate"`
	MemoryBudgetBytes int64     `json:"memoryBudgetBytes"`
	PickSeconds       *float64  `json:"pickSeconds"`
	Providers         []curveMP `json:"providers"`
}

// curveMP is one provider as the chart draws it.
type curveMP struct {
	Provider string `json:"provider"`
	// ExecutorMemoryBytes is the memory its state may use (0: not
	// stated).
	ExecutorMemoryBytes int64 `json:"executorMemoryBytes"`
}

// curveSection is the template's data of the interactive chart.
type curveSection struct {
	Intro, Caption string
	Last           int
	Providers      []ReviewProvider
	JSON           template.JS
	Script         template.JS
}

// curveSection returns the interactive chart's data: the curve inlined as
// JSON (json.Marshal escapes <, > and &, so it cannot end its script
// element) and the script that draws it.
func (rv *Review) curveSection() (*curveSection, error) {
	d := curveData{Points: rv.Curve, MaxMissedRate: rv.MaxMissedRate, MaxFalseDropRate: rv.MaxFalseDropRate,
		MemoryBudgetBytes: rv.MemoryBudgetBytes, PickSeconds: rv.RecommendedDelaySeconds, Providers: []curveMP{}}
	var provs []ReviewProvider
	if rv.Cluster != nil && slices.ContainsFunc(rv.Curve, func(p ReviewCurvePoint) bool { return len(p.ExecutorMemoryBytes) == len(rv.Cluster.Providers) }) {
		provs = rv.Cluster.Providers
		for _, p := range provs {
			d.Providers = append(d.Providers, curveMP{Provider: p.Provider, ExecutorMemoryBytes: p.ExecutorMemoryBytes})
		}
	}
	js, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("report.html: the curve: %w", err)
	}
	seed := ""
	if len(rv.Seeds) > 0 {
		seed = fmt.Sprintf(" of seed %d", rv.Seeds[0].Seed)
	}
	intro := fmt.Sprintf("The exact tradeoff%s at %s/s, from one pass over its stream (sim/curve): move the slider, or the pointer over the chart, to read any delay from %s to %s; the page's address takes a delay too (report.html#delay=5m30s). "+
		"Rates are exact at every delay; the peak state is exact at the delays the pass tracked (plan's grid) and interpolated between them, as the line says.",
		seed, fmtRate(rv.PlannedRate), fmtSecs(rv.Curve[0].DelaySeconds), fmtSecs(rv.Curve[len(rv.Curve)-1].DelaySeconds))
	if len(provs) > 0 {
		intro += " " + rv.CurveMemory
	}
	caption := "Missed duplicates and false drops (log scales; 0 on the floor) against their targets (dashed red), and the peak state bytes of one store version"
	if len(provs) > 0 {
		caption += " with each provider's executor peak state memory (dashed: the memory its state may use, when near the data; the legend gives it)"
	}
	caption += "; green: the recommended delay; grey: the delay shown above."
	return &curveSection{Intro: intro, Caption: caption, Last: len(rv.Curve) - 1, Providers: provs, JSON: template.JS(js), Script: template.JS(curveScript)}, nil
}

// curveScript draws the curve (an SVG built here, no library) and shows
// the values at the slider's delay. It reads the delay to start at from
// the address (#delay=90s, #delay=1m30s or #delay=90), else the pick.
const curveScript = `(function () {
"use strict";
var data = JSON.parse(document.getElementById("curve-data").textContent);
var pts = data.points, n = pts.length;
var svg = document.getElementById("cv-svg"), slider = document.getElementById("cv-slider");
var NS = "http://www.w3.org/2000/svg";
var W = 960, L = 92, R = 24, PH = 150, GAP = 40, TOP = 14;
var colors = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00"];
function el(name, attrs, parent, text) {
  var e = document.createElementNS(NS, name);
  for (var k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  (parent || svg).appendChild(e);
  return e;
}
function fmtDelay(s) {
  s = Math.round(s);
  var h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, x = s % 60, out = "";
  if (h > 0) out += h + "h";
  if (m > 0) out += m + "m";
  if (x > 0 || s === 0) out += x + "s";
  return out;
}
function pct(v) {
  if (v === 0) return "0%";
  var p = 100 * v;
  return (p >= 10 ? p.toFixed(1) : p.toPrecision(3)) + "%";
}
function tickPct(v) {
  var p = 100 * v;
  return (p >= 1 ? String(Math.round(p)) : String(+p.toPrecision(1))) + "%";
}
function bytes(v) {
  var u = ["B", "KiB", "MiB", "GiB", "TiB"], i = 0;
  while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
  return (i === 0 ? String(Math.round(v)) : v.toPrecision(3)) + " " + u[i];
}
function count(v) { return Math.round(v).toLocaleString("en-US"); }
function parseDelay(t) {
  t = decodeURIComponent(t).trim();
  if (/^[0-9.]+$/.test(t)) return parseFloat(t);
  var re = /([0-9.]+)(h|m|s)/g, m, s = 0, seen = false;
  while ((m = re.exec(t)) !== null) { seen = true; s += parseFloat(m[1]) * {h: 3600, m: 60, s: 1}[m[2]]; }
  return seen ? s : NaN;
}
// The x axis: log when the delays span 20 times or more.
var d0 = pts[0].delaySeconds > 0 ? pts[0].delaySeconds : (n > 1 ? pts[1].delaySeconds : 1), d1 = pts[n - 1].delaySeconds;
var logX = d0 > 0 && d1 / d0 >= 20;
function x(d) {
  var f = logX ? (Math.log10(Math.max(d, d0)) - Math.log10(d0)) / (Math.log10(d1) - Math.log10(d0)) : (d - pts[0].delaySeconds) / ((d1 - pts[0].delaySeconds) || 1);
  return L + (W - L - R) * f;
}
// state returns the peak state and executor memory at point i: exact
// where tracked, else interpolated between the tracked neighbours.
function state(i) {
  if (pts[i].peakStateRows != null) return {rows: pts[i].peakStateRows, bytes: pts[i].peakStateBytes, mem: pts[i].executorMemoryBytes || [], exact: true};
  var a = i, b = i;
  while (a >= 0 && pts[a].peakStateRows == null) a--;
  while (b < n && pts[b].peakStateRows == null) b++;
  if (a < 0 && b >= n) return null;
  if (a < 0 || b >= n) { var j = a < 0 ? b : a; var s = state(j); s.exact = false; s.from = [j, j]; return s; }
  var f = (pts[i].delaySeconds - pts[a].delaySeconds) / (pts[b].delaySeconds - pts[a].delaySeconds);
  var lerp = function (u, v) { return u + f * (v - u); };
  var mem = [], ma = pts[a].executorMemoryBytes || [], mb = pts[b].executorMemoryBytes || [];
  for (var k = 0; k < ma.length; k++) mem.push(lerp(ma[k], mb[k]));
  return {rows: lerp(pts[a].peakStateRows, pts[b].peakStateRows), bytes: lerp(pts[a].peakStateBytes, pts[b].peakStateBytes), mem: mem, exact: false, from: [a, b]};
}
var panels = [];
function panel(k, label, vals, isLog, extra) {
  var top = TOP + k * (PH + GAP), lo, hi, floor = false;
  var all = vals.filter(function (v) { return v != null; });
  extra.forEach(function (e) { if (e.v > 0) all.push(e.v); });
  if (isLog) {
    var pos = all.filter(function (v) { return v > 0; });
    lo = pos.length ? Math.floor(Math.log10(Math.min.apply(null, pos))) : -6;
    hi = pos.length ? Math.ceil(Math.log10(Math.max.apply(null, pos))) : 0;
    if (hi <= lo) hi = lo + 1;
    floor = all.some(function (v) { return v === 0; });
    if (floor) lo -= 1;
  } else {
    lo = 0; hi = Math.max.apply(null, all.concat([1])) * 1.08;
  }
  var y = function (v) {
    var f = isLog ? (Math.log10(Math.max(v, Math.pow(10, lo))) - lo) / (hi - lo) : (v - lo) / (hi - lo);
    return top + PH - PH * f;
  };
  el("rect", {x: L, y: top, width: W - L - R, height: PH, fill: "#fff", stroke: "#d0d7de"});
  var ticks = [];
  if (isLog) { for (var e = lo; e <= hi; e++) ticks.push(Math.pow(10, e)); }
  else { for (var t = 0; t <= 4; t++) ticks.push(hi / 1.08 * t / 4); }
  ticks.forEach(function (v, ti) {
    var yy = y(v);
    el("line", {x1: L, x2: W - R, y1: yy, y2: yy, stroke: "#eef1f4"});
    var lab = isLog ? (floor && ti === 0 ? "0" : tickPct(v)) : bytes(v);
    el("text", {x: L - 6, y: yy + 4, "text-anchor": "end", "font-size": 11, fill: "#57606a"}, null, lab);
  });
  el("text", {x: 14, y: top + PH / 2, "font-size": 12, fill: "#1f2328", transform: "rotate(-90 14 " + (top + PH / 2) + ")", "text-anchor": "middle"}, null, label);
  panels.push({top: top, y: y});
  return panels[panels.length - 1];
}
function line(p, get, color, dash, width) {
  var d = "", pen = false;
  for (var i = 0; i < n; i++) {
    var v = get(i);
    if (v == null) continue;
    d += (pen ? "L" : "M") + x(pts[i].delaySeconds).toFixed(1) + "," + p.y(v).toFixed(1);
    pen = true;
  }
  if (d) el("path", {d: d, fill: "none", stroke: color, "stroke-width": width || 2, "stroke-dasharray": dash || ""});
}
function hline(p, v, color, label) {
  if (!(v > 0)) return;
  var yy = p.y(v);
  el("line", {x1: L, x2: W - R, y1: yy, y2: yy, stroke: color, "stroke-width": 1.3, "stroke-dasharray": "6 4"});
  el("text", {x: W - R - 4, y: yy - 4, "text-anchor": "end", "font-size": 11, fill: color}, null, label);
}
var red = "#cf222e";
var pm = panel(0, "missed duplicates", pts.map(function (p) { return p.missedRate; }), true, [{v: data.maxMissedRate}]);
line(pm, function (i) { return pts[i].missedRate; }, colors[0]);
hline(pm, data.maxMissedRate, red, "target " + pct(data.maxMissedRate));
var pf = panel(1, "false drops", pts.map(function (p) { return p.falseDropRate; }), true, [{v: data.maxFalseDropRate}]);
line(pf, function (i) { return pts[i].falseDropRate; }, colors[1]);
hline(pf, data.maxFalseDropRate, red, "target " + pct(data.maxFalseDropRate));
var sv = [], ex = [{v: data.memoryBudgetBytes}];
for (var i = 0; i < n; i++) {
  var s = pts[i].peakStateRows != null ? state(i) : null;
  sv.push(s ? s.bytes : null);
  if (s) s.mem.forEach(function (m) { sv.push(m); });
}
var top = Math.max.apply(null, sv.filter(function (v) { return v != null; }).concat([1]));
// A limit far above the data would flatten it: drawn only when near.
var near = function (v) { return v > 0 && v <= 3 * top; };
data.providers.forEach(function (p) { if (near(p.executorMemoryBytes)) ex.push({v: p.executorMemoryBytes}); });
var ps = panel(2, "state bytes", sv, false, ex);
line(ps, function (i) { return pts[i].peakStateRows != null ? pts[i].peakStateBytes : null; }, colors[2]);
var legend = [["peak state, one version", colors[2], ""]];
data.providers.forEach(function (p, k) {
  var c = colors[3 + k % 2];
  line(ps, function (i) { return pts[i].executorMemoryBytes ? pts[i].executorMemoryBytes[k] : null; }, c, "", 1.6);
  var limit = p.executorMemoryBytes > 0 ? " (of " + bytes(p.executorMemoryBytes) + ")" : "";
  if (near(p.executorMemoryBytes)) hline(ps, p.executorMemoryBytes, c, p.provider + ": executor memory for the state " + bytes(p.executorMemoryBytes));
  legend.push(["executor peak state memory, " + p.provider + limit, c, ""]);
});
hline(ps, data.memoryBudgetBytes, red, "budget " + bytes(data.memoryBudgetBytes));
legend.forEach(function (l, k) {
  var lx = L + k * 270, ly = ps.top - 8;
  el("line", {x1: lx, x2: lx + 22, y1: ly - 4, y2: ly - 4, stroke: l[1], "stroke-width": 2});
  el("text", {x: lx + 28, y: ly, "font-size": 11, fill: "#1f2328"}, null, l[0]);
});
// The x axis, under the last panel.
var axisY = ps.top + PH;
var xt = [];
if (logX) { for (var e = Math.ceil(Math.log10(d0)); Math.pow(10, e) <= d1; e++) [1, 2, 5].forEach(function (m) { var v = m * Math.pow(10, e); if (v >= d0 && v <= d1) xt.push(v); }); }
else { for (var t = 0; t <= 6; t++) xt.push(pts[0].delaySeconds + (d1 - pts[0].delaySeconds) * t / 6); }
xt.forEach(function (v) {
  el("line", {x1: x(v), x2: x(v), y1: axisY, y2: axisY + 5, stroke: "#57606a"});
  el("text", {x: x(v), y: axisY + 18, "text-anchor": "middle", "font-size": 11, fill: "#57606a"}, null, fmtDelay(v));
});
el("text", {x: (L + W - R) / 2, y: axisY + 36, "text-anchor": "middle", "font-size": 12, fill: "#1f2328"}, null, "watermark delay" + (logX ? " (log scale)" : ""));
if (data.pickSeconds != null) {
  panels.forEach(function (p) { el("line", {x1: x(data.pickSeconds), x2: x(data.pickSeconds), y1: p.top, y2: p.top + PH, stroke: "#1a7f37", "stroke-width": 2}); });
  el("text", {x: x(data.pickSeconds) + 4, y: TOP + 12, "font-size": 11, fill: "#1a7f37"}, null, "recommended " + fmtDelay(data.pickSeconds));
}
var cursor = panels.map(function (p) { return el("line", {x1: 0, x2: 0, y1: p.top, y2: p.top + PH, stroke: "#57606a", "stroke-width": 1, "stroke-dasharray": "2 3"}); });
var dots = [pm, pf, ps].map(function (p, k) { return el("circle", {r: 4, fill: [colors[0], colors[1], colors[2]][k], cx: -10, cy: -10}); });
function set(id, text, value) {
  var e = document.getElementById(id);
  if (!e) return;
  e.textContent = text;
  if (value !== undefined) e.setAttribute("data-value", String(value));
}
function vs(v, target) { return target > 0 ? "(target " + pct(target) + ": " + (v <= target ? "meets" : "misses") + ")" : ""; }
function show(i) {
  i = Math.max(0, Math.min(n - 1, i));
  slider.value = String(i);
  var p = pts[i], c = p.falseDropsByCause;
  set("cv-delay", fmtDelay(p.delaySeconds), p.delaySeconds);
  set("cv-delay-big", fmtDelay(p.delaySeconds));
  set("cv-missed", pct(p.missedRate), p.missedRate);
  set("cv-missed-vs", vs(p.missedRate, data.maxMissedRate));
  set("cv-fd", pct(p.falseDropRate), p.falseDropRate);
  set("cv-fd-vs", vs(p.falseDropRate, data.maxFalseDropRate));
  set("cv-fd-causes", count(c.late) + " late, " + count(c.badClock) + " to bad clocks, " + count(c.collision) + " to key collisions");
  var s = state(i);
  if (s) {
    set("cv-rows", (s.exact ? "" : "about ") + count(s.rows), s.exact ? s.rows : "");
    set("cv-bytes", bytes(s.bytes), s.exact ? s.bytes : "");
    set("cv-state-how", s.exact ? "(tracked at this delay)" : "(interpolated between the tracked delays " + fmtDelay(pts[s.from[0]].delaySeconds) + " and " + fmtDelay(pts[s.from[1]].delaySeconds) + ")");
    data.providers.forEach(function (pr, k) {
      set("cv-mem-" + k, bytes(s.mem[k]), s.exact ? s.mem[k] : "");
      set("cv-mem-vs-" + k, pr.executorMemoryBytes > 0 ? "of " + bytes(pr.executorMemoryBytes) + (s.mem[k] <= pr.executorMemoryBytes ? ": fits" : ": does NOT fit") : "");
    });
  }
  var cx = x(p.delaySeconds);
  cursor.forEach(function (l) { l.setAttribute("x1", cx); l.setAttribute("x2", cx); });
  dots[0].setAttribute("cx", cx); dots[0].setAttribute("cy", pm.y(p.missedRate));
  dots[1].setAttribute("cx", cx); dots[1].setAttribute("cy", pf.y(p.falseDropRate));
  dots[2].setAttribute("cx", s ? cx : -10); dots[2].setAttribute("cy", s ? ps.y(s.bytes) : -10);
}
function nearest(d) {
  var best = 0;
  for (var i = 1; i < n; i++) if (Math.abs(pts[i].delaySeconds - d) < Math.abs(pts[best].delaySeconds - d)) best = i;
  return best;
}
function fromAddress() {
  var m = /(?:^|[#&])delay=([^&]+)/.exec(location.hash);
  var d = m ? parseDelay(m[1]) : NaN;
  if (!isNaN(d)) return nearest(d);
  return data.pickSeconds != null ? nearest(data.pickSeconds) : 0;
}
slider.addEventListener("input", function () { show(parseInt(slider.value, 10)); });
svg.addEventListener("mousemove", function (ev) {
  var r = svg.getBoundingClientRect();
  var sx = (ev.clientX - r.left) * W / r.width, best = 0;
  for (var i = 1; i < n; i++) if (Math.abs(x(pts[i].delaySeconds) - sx) < Math.abs(x(pts[best].delaySeconds) - sx)) best = i;
  show(best);
});
window.addEventListener("hashchange", function () { show(fromAddress()); });
show(fromAddress());
})();
`
