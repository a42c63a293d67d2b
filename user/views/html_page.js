// The page of `idlegap --html` (docs/design.md §7.8, the HTML page): draws the run's
// data, embedded as JSON above, with no request and no library.
"use strict";
const CHECK = { errors: [] };
window.addEventListener("error", (e) => CHECK.errors.push(String(e.message)));

const COLORS = {
	busy: "#2e7d32", unresolved: "#9e9e9e", peer_wait: "#7e57c2", idle: "#f48fb1",
	storage: "#e53935", page_fault: "#f4511e", cpu_starvation: "#fb8c00",
	gil: "#fdd835", lock: "#c0ca33", network: "#1e88e5", host_compute: "#8d6e63",
	cuda_api: "#00acc1", sleep: "#5c6bc0", wait_untracked: "#d81b60",
	peer_compute: "#00897b", unknown: "#37474f",
};
const BACKGROUND = "#f2f2f2";
const STRIP_H = 40;
const D = JSON.parse(document.getElementById("ig-data").textContent);

function $(id) { return document.getElementById(id); }
function el(tag, text, cls) {
	const e = document.createElement(tag);
	if (text !== undefined && text !== null) e.textContent = String(text);
	if (cls) e.className = cls;
	return e;
}
function causeOf(state) { return state.startsWith("idle:") ? state.slice(5) : state; }
function colorOf(state) { return COLORS[causeOf(state)] || "#000000"; }
function label(state) {
	return state.startsWith("idle:") ? "idle: " + state.slice(5).replace(/_/g, " ") :
		state === "idle" ? "idle, no cause given" : state.replace(/_/g, " ");
}
function pct(x) { return (100 * x).toFixed(1) + "%"; }
function fmtS(s) {
	if (s === null || s === undefined) return "-";
	if (s >= 1) return s.toFixed(3) + " s";
	if (s >= 1e-3) return (s * 1e3).toFixed(2) + " ms";
	return (s * 1e6).toFixed(1) + " us";
}
function swatch(state) {
	const s = el("span", null, "sw");
	s.style.background = colorOf(state);
	return s;
}
// Canvas of CSS size w x h, its pixels the device's.
function sizeCanvas(c, w, h) {
	const r = window.devicePixelRatio || 1;
	c.width = Math.round(w * r);
	c.height = Math.round(h * r);
	c.style.width = w + "px";
	c.style.height = h + "px";
	const g = c.getContext("2d");
	g.setTransform(r, 0, 0, r, 0, 0);
	return g;
}
function docRect(e) {
	const r = e.getBoundingClientRect();
	return { x: r.left + window.scrollX, y: r.top + window.scrollY, w: r.width, h: r.height };
}
const tip = $("tip");
function showTip(ev, text) {
	tip.textContent = text;
	tip.style.display = "block";
	tip.style.left = (ev.pageX + 14) + "px";
	tip.style.top = (ev.pageY + 14) + "px";
}
function hideTip() { tip.style.display = "none"; }

// ---- header -------------------------------------------------------------
function header() {
	const m = D.meta || {}, g = D.gpu || {};
	const procs = (D.processes || []).map((p) => p.comm + " (" + p.pid + ")").join(", ");
	$("meta").textContent = [m.host ? "host " + m.host : null, m.command ? "command: " + m.command : null,
		D.duration_s !== undefined ? "traced " + fmtS(D.duration_s) : null,
		procs ? "processes: " + procs : null].filter((x) => x).join("  ·  ");
	const span = g.span_s || ((g.busy_s || 0) + (g.idle_s || 0) + (g.unresolved_s || 0) + (g.peer_wait_s || 0));
	const s = $("summary");
	if (!span) {
		s.textContent = "No GPU time was seen: no process submitted work while traced.";
		return;
	}
	s.textContent = "GPU busy " + pct(g.busy_s / span) + ", idle " + pct(g.idle_s / span) +
		(g.peer_wait_s ? ", waiting for peers " + pct(g.peer_wait_s / span) : "") +
		", unresolved " + pct(g.unresolved_s / span) + " of " + fmtS(span) +
		(g.gaps ? "; " + g.gaps + " idle gaps (p50 " + g.gap_p50_ms + " ms, p99 " + g.gap_p99_ms + " ms)" : "") + ".";
	if (D.complete === false)
		s.appendChild(el("span", " The trace is incomplete: " + (D.stop_reason || "stopped early") + ".", "warn"));
}

// ---- the strips -----------------------------------------------------------
const strips = (D.strips || []).map((s) => {
	const dev = (D.devices || []).find((d) => d.device === s.key) || {};
	return Object.assign({}, s, { dev: dev,
		t0: s.t0_ns / 1e9, bin: s.bin_ns / 1e9, names: Object.keys(s.states) });
}).sort((a, b) => a.key - b.key);
const T0 = strips.length ? Math.min(...strips.map((s) => s.t0)) : 0;
const T1 = strips.length ? Math.max(...strips.map((s) => s.t0 + s.nbins * s.bin)) : 1;
const ORDER = ["busy", "peer_wait", "unresolved", "idle"];
function stateOrder(a, b) {
	const i = ORDER.indexOf(a), j = ORDER.indexOf(b);
	if (i >= 0 || j >= 0) return (i < 0 ? 9 : i) - (j < 0 ? 9 : j);
	return a < b ? -1 : a > b;
}
let view = [T0, T1];
const W = Math.max(400, Math.min(1100, (document.body.clientWidth || 1240) - 150));

function devName(s) {
	if (s.key >= 0x40000000)	// a process's GPU that nothing placed
		return "GPU ? (pid " + (s.key & 0x3fffffff) + ")";
	return "GPU " + s.key + (s.dev.rank !== null && s.dev.rank !== undefined ? " rank " + s.dev.rank : "");
}

// Each state's share of every column of [v0, v1): from the bins it overlaps.
function columns(s, v0, v1, w) {
	const out = [], dt = (v1 - v0) / w;
	for (let x = 0; x < w; x++) {
		const a = v0 + x * dt, b = a + dt, f = {};
		let i = Math.max(0, Math.floor((a - s.t0) / s.bin));
		const last = Math.min(s.nbins - 1, Math.ceil((b - s.t0) / s.bin));
		for (; i <= last; i++) {
			const ba = s.t0 + i * s.bin, ov = Math.min(b, ba + s.bin) - Math.max(a, ba);
			if (ov <= 0) continue;
			for (const n of s.names) {
				const v = s.states[n][i];
				if (v) f[n] = (f[n] || 0) + v / 1000 * ov / dt;
			}
		}
		out.push(f);
	}
	return out;
}

// Columns stacked by share, busy at the bottom; each state's rows are
// rounded so that its area over the strip is its share, within a row.
function drawStrip(s) {
	const g = sizeCanvas(s.canvas, W, STRIP_H);
	g.fillStyle = BACKGROUND;
	g.fillRect(0, 0, W, STRIP_H);
	s.cols = columns(s, view[0], view[1], W);
	const names = s.names.slice().sort(stateOrder), carry = {}, drawn = {};
	for (const n of names) carry[n] = drawn[n] = 0;
	for (let x = 0; x < W; x++) {
		let y = STRIP_H;
		for (const n of names) {
			carry[n] += (s.cols[x][n] || 0) * STRIP_H;
			// rows a full column cannot take are owed to the next ones
			const h = Math.min(Math.round(carry[n]) - drawn[n], y);
			if (h <= 0) continue;
			drawn[n] += h;
			g.fillStyle = colorOf(n);
			g.fillRect(x, y - h, 1, h);
			y -= h;
		}
	}
}

function drawAxis() {
	const c = $("axis"), g = sizeCanvas(c, W, 22), span = view[1] - view[0];
	g.clearRect(0, 0, W, 22);
	g.fillStyle = "#444";
	g.font = "11px DejaVu Sans, sans-serif";
	const raw = span / 8, p = Math.pow(10, Math.floor(Math.log10(raw)));
	const step = [1, 2, 5, 10].map((k) => k * p).find((k) => k >= raw);
	for (let t = Math.ceil((view[0] - T0) / step) * step; t <= view[1] - T0; t += step) {
		const x = Math.round((t + T0 - view[0]) / span * W);
		g.fillRect(x, 14, 1, 8);
		const txt = step >= 1 ? t.toFixed(0) + " s" : step >= 1e-3 ?
			(t * 1e3).toFixed(step >= 1e-2 ? 0 : 1) + " ms" : (t * 1e6).toFixed(0) + " us";
		g.fillText(txt, Math.min(x + 2, W - 40), 11);
	}
	$("view").textContent = "showing " + fmtS(view[0] - T0) + " to " + fmtS(view[1] - T0) +
		" of " + fmtS(T1 - T0);
}

function drawStrips() {
	drawAxis();
	strips.forEach(drawStrip);
}

function zoom(at, factor) {
	const minSpan = Math.min(...strips.map((s) => s.bin)) * W / 16;
	let span = Math.max(minSpan, Math.min(T1 - T0, (view[1] - view[0]) * factor));
	let v0 = at - (at - view[0]) * span / (view[1] - view[0]);
	v0 = Math.max(T0, Math.min(T1 - span, v0));
	view = [v0, v0 + span];
	drawStrips();
}

function stripEvents(c, s) {
	let drag = null;
	c.addEventListener("wheel", (ev) => {
		ev.preventDefault();
		const at = view[0] + ev.offsetX / W * (view[1] - view[0]);
		zoom(at, ev.deltaY < 0 ? 0.8 : 1.25);
	}, { passive: false });
	c.addEventListener("mousedown", (ev) => { drag = { x: ev.clientX, v: view.slice() }; });
	window.addEventListener("mouseup", () => { drag = null; });
	c.addEventListener("mousemove", (ev) => {
		if (drag) {
			const span = drag.v[1] - drag.v[0];
			let v0 = drag.v[0] - (ev.clientX - drag.x) / W * span;
			v0 = Math.max(T0, Math.min(T1 - span, v0));
			view = [v0, v0 + span];
			drawStrips();
			return;
		}
		const x = Math.max(0, Math.min(W - 1, Math.floor(ev.offsetX))), f = s.cols[x];
		const t = view[0] + (x + 0.5) / W * (view[1] - view[0]) - T0;
		const lines = Object.keys(f).sort((a, b) => f[b] - f[a])
			.filter((n) => f[n] >= 0.001).map((n) => "  " + label(n) + ": " + pct(f[n]));
		showTip(ev, devName(s) + " at " + fmtS(t) + "\n" + (lines.length ? lines.join("\n") : "  outside its span"));
	});
	c.addEventListener("mouseleave", hideTip);
	c.addEventListener("dblclick", () => { view = [T0, T1]; drawStrips(); });
}

function legend() {
	const tot = {};
	for (const s of strips)
		for (const n of s.names) tot[n] = (tot[n] || 0) + (s.seconds[n] || 0);
	const all = Object.values(tot).reduce((a, b) => a + b, 0) || 1;
	for (const n of Object.keys(tot).sort(stateOrder)) {
		const item = el("span");
		item.appendChild(swatch(n));
		item.appendChild(document.createTextNode(label(n) + " " + pct(tot[n] / all)));
		$("legend").appendChild(item);
	}
}

function buildStrips() {
	if (!strips.length) {
		$("strips").appendChild(el("p", "No GPU time to draw.", "muted"));
		return;
	}
	legend();
	for (const s of strips) {
		const row = el("div", null, "row");
		row.appendChild(el("div", devName(s), "label"));
		s.canvas = el("canvas", null, "strip");
		s.canvas.title = "";
		row.appendChild(s.canvas);
		$("strips").appendChild(row);
		stripEvents(s.canvas, s);
	}
	$("reset").addEventListener("click", () => { view = [T0, T1]; drawStrips(); });
	$("axis").addEventListener("dblclick", () => { view = [T0, T1]; drawStrips(); });
	drawStrips();
	const b = D.bounds || {}, widths = strips.map((s) => fmtS(s.bin)).filter((v, i, a) => a.indexOf(v) === i);
	$("strip-note").textContent = "Each GPU's time is kept in at most " + b.bins_per_gpu +
		" bins (" + b.bins_all + " for all GPUs together), so that the page stays small however long the run: here one bin is " +
		widths.join(", ") + ". A column shows the mix of states in its time, stacked by share (busy at the bottom); zooming in shows no detail finer than a bin." +
		(D.strips_left_out ? " " + D.strips_left_out + " more GPUs are left out of the page." : "") +
		((b.left_out || []).length ? " To stay small the page leaves out the " + b.left_out.join(" and ") +
			" (the JSON report and --folded have them)." : "");
}

// ---- the causes -----------------------------------------------------------
const DETAIL_LABEL = {
	mount: (d) => "reading " + d.files + " files under " + d.mount + " (" + d.fstype + ")",
	file: (d) => d.path || d.file,
	device: (d) => "block device " + d.dev + ": " + d.reads + " reads, p50 " + d.read_p50_ms + " ms, p99 " + d.read_p99_ms + " ms",
	stack: (d) => d.role + " (" + d.lang + "): " + (d.frames || []).join(" < "),
	thread: (d) => "tid " + d.tid + " (" + d.comm + ", pid " + d.pid + ")",
	process: (d) => "ran instead: pid " + d.pid + " (" + d.comm + ")",
	cpu: (d) => "on cpu " + d.cpu,
	api: (d) => d.api,
	lock: (d) => "lock " + d.addr + " in pid " + d.pid,
	why: (d) => d.why,
};
function detailText(d) {
	const f = DETAIL_LABEL[d.kind];
	if (f) return f(d);
	return Object.keys(d).filter((k) => k !== "seconds" && k !== "count")
		.map((k) => k + " " + (typeof d[k] === "object" ? JSON.stringify(d[k]) : d[k])).join(", ");
}
function causesTable(list, total, where) {
	if (!list || !list.length) {
		$(where).appendChild(el("p", "None.", "muted"));
		return;
	}
	const t = el("table"), head = el("tr");
	for (const h of ["cause", "time", "share", "details"])
		head.appendChild(el("th", h, h === "time" || h === "share" ? "num" : null));
	t.appendChild(head);
	for (const c of list) {
		const tr = el("tr"), name = el("td");
		name.appendChild(swatch(c.cause));
		name.appendChild(document.createTextNode(c.cause));
		tr.appendChild(name);
		tr.appendChild(el("td", fmtS(c.seconds), "num"));
		tr.appendChild(el("td", pct(c.share !== undefined ? c.share : c.seconds / total), "num"));
		const td = el("td"), det = c.details || [];
		if (det.length) {
			const box = el("details"), ul = el("ul");
			box.appendChild(el("summary", detailText(det[0]) + (det.length > 1 ? "  (+" + (det.length - 1) + " more)" : "")));
			for (const d of det) {
				const li = el("li", detailText(d) + " ");
				if (d.seconds !== undefined) li.appendChild(el("span", fmtS(d.seconds) + (d.count ? ", " + d.count + "x" : ""), "muted"));
				ul.appendChild(li);
			}
			if (c.details_omitted) ul.appendChild(el("li", c.details_omitted + " more in the JSON report", "muted"));
			box.appendChild(ul);
			td.appendChild(box);
		}
		tr.appendChild(td);
		t.appendChild(tr);
	}
	$(where).appendChild(t);
}

// ---- the flame graph --------------------------------------------------------
const ROW = 18;
const flame = { root: null, focus: null, rows: [] };
function flameTree() {
	const byName = {};
	for (const k of (D.flame && D.flame.c) || []) byName[k.n] = k;
	const kids = (D.causes || []).map((c) => {
		const n = byName[c.cause] || { n: c.cause, v: 0 };
		const want = Math.round(c.seconds * 1e9), node = { n: c.cause, v: Math.max(want, n.v), c: (n.c || []).slice(), cause: true };
		if (n.v < want) node.c.push({ n: "(no stack)", v: want - n.v, none: true });
		return node;
	});
	const root = { n: "all idle time", v: kids.reduce((a, k) => a + k.v, 0), c: kids };
	(function link(n, parent, depth) {
		n.parent = parent;
		n.depth = depth;
		(n.c || []).sort((a, b) => b.v - a.v).forEach((k) => link(k, n, depth + 1));
	})(root, null, -1);
	return root;
}
function hue(name) {
	let h = 0;
	for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
	return "hsl(" + (15 + h % 35) + ",78%," + (62 + (h >> 8) % 12) + "%)";
}
function flameDepth(n) { return 1 + Math.max(0, ...(n.c || []).map(flameDepth)); }
function drawFlame() {
	const root = flame.root, focus = flame.focus || root, c = $("flame");
	const depth = flameDepth(root) - 1, h = Math.max(1, depth) * ROW;
	const g = sizeCanvas(c, W + 130, h);
	const FW = W + 130;
	g.clearRect(0, 0, FW, h);
	g.font = "11px DejaVu Sans, sans-serif";
	flame.rows = [];
	const box = (n, x0, x1, dim) => {
		const y = n.depth * ROW;
		g.fillStyle = n.cause ? COLORS[n.n] || "#000" : n.none ? "#dddddd" : hue(n.n);
		g.globalAlpha = dim ? 0.45 : 1;
		g.fillRect(x0, y, x1 - x0 - (n.cause ? 0 : 1), ROW - 1);
		g.globalAlpha = 1;
		flame.rows.push({ n: n, x0: x0, x1: x1, y: y });
		if (x1 - x0 > 28) {
			g.save();
			g.beginPath();
			g.rect(x0, y, x1 - x0 - 2, ROW);
			g.clip();
			g.fillStyle = n.cause && n.n !== "gil" && n.n !== "lock" ? "#fff" : "#111";
			g.fillText(n.n + " " + fmtS(n.v / 1e9), x0 + 3, y + 13);
			g.restore();
		}
	};
	for (let a = focus; a && a !== root; a = a.parent)
		if (a !== focus) box(a, 0, FW, true);
	// children across their parent's width, edges rounded so they tile it
	const lay = (n, x0, x1) => {
		if (n !== root) box(n, x0, x1, false);
		let acc = 0;
		for (const k of n.c || []) {
			const a = x0 + Math.round((x1 - x0) * acc / n.v);
			acc += k.v;
			const b = x0 + Math.round((x1 - x0) * acc / n.v);
			if (b > a) lay(k, a, b);
		}
	};
	if (focus === root) lay(root, 0, FW);
	else lay(focus, 0, FW);
	CHECK.flame = { rect: docRect(c), row: ROW, roots: (root.c || []).map((k) => ({ cause: k.n, s: k.v / 1e9 })) };
}
function flameHit(ev) {
	const x = ev.offsetX, y = ev.offsetY;
	return flame.rows.find((r) => x >= r.x0 && x < r.x1 && y >= r.y && y < r.y + ROW);
}
function buildFlame() {
	flame.root = flameTree();
	if (!flame.root.v) {
		$("sec-flame").appendChild(el("p", "No idle time, so no stacks.", "muted"));
		$("flame").style.display = "none";
		return;
	}
	const c = $("flame");
	c.addEventListener("click", (ev) => {
		const r = flameHit(ev);
		flame.focus = !r || r.n === flame.focus ? null : r.n;
		drawFlame();
	});
	c.addEventListener("mousemove", (ev) => {
		const r = flameHit(ev);
		if (!r) return hideTip();
		let cause = r.n;
		while (cause.parent && !cause.cause) cause = cause.parent;
		showTip(ev, r.n.n + "\n" + fmtS(r.n.v / 1e9) + ", " + pct(r.n.v / flame.root.v) + " of the idle time" +
			(cause !== r.n ? ", " + pct(r.n.v / cause.v) + " of " + cause.n : ""));
	});
	c.addEventListener("mouseleave", hideTip);
	$("flame-reset").addEventListener("click", () => { flame.focus = null; drawFlame(); });
	drawFlame();
	const f = D.flame || {};
	$("flame-note").textContent = "Each cause is as wide as its idle time; under it, the stacks its time went to, outermost frame first " +
		"(one role a cause: the thread that read, faulted or received, else the lock's holder, else the waiting thread). " +
		"\"(no stack)\" is time for which no stack was seen." +
		(f.truncated ? " " + f.truncated + " stacks were cut short to keep the page small (" + (D.bounds || {}).flame_nodes + " frames at most)." : "");
}

// ---- the steps ----------------------------------------------------------------
function stepChart(st, box) {
	const c = el("canvas", null, "chart"), H = 170, PAD = 28, pts = st.points || [];
	box.appendChild(c);
	const g = sizeCanvas(c, W + 130, H), CW = W + 130 - PAD;
	const p90 = st.p90_s * 1e3, top = Math.max(1e-3, Math.min(Math.max(...pts.map((p) => p[2])), 4 * p90 || Infinity));
	const y = (ms) => H - 14 - Math.min(1, ms / top) * (H - 24);
	g.fillStyle = "#fff";
	g.fillRect(0, 0, W + 130, H);
	const bw = CW / Math.max(1, pts.length);
	pts.forEach((p, i) => {
		g.fillStyle = p[4] ? COLORS[p[4]] || "#555" : "#9e9e9e";
		const x = PAD + Math.floor(i * bw), w = Math.max(1, Math.floor((i + 1) * bw) - Math.floor(i * bw) - (bw > 3 ? 1 : 0));
		g.fillRect(x, y(p[2]), w, H - 14 - y(p[2]));
	});
	g.font = "10px DejaVu Sans, sans-serif";
	// each line's label on a side of its own: the two lines are close
	const line = (ms, color, text, left) => {
		const yy = Math.round(y(ms)), tw = g.measureText(text).width;
		const x = left ? PAD + 3 : W + 130 - tw - 3;
		g.fillStyle = color;
		g.fillRect(PAD, yy, CW, 1);
		g.fillStyle = "rgba(255,255,255,.85)";
		g.fillRect(x - 3, yy - 12, tw + 6, 11);
		g.fillStyle = color;
		g.fillText(text, x, yy - 3);
	};
	line(st.p50_s * 1e3, "#000", "p50 " + (st.p50_s * 1e3).toFixed(2) + " ms", true);
	line(st.slow_factor * st.p50_s * 1e3, "#c00", "slow: over " + st.slow_factor + " x p50", false);
	g.fillStyle = "#444";
	g.fillText(top.toFixed(top < 10 ? 2 : 0) + " ms", 0, 10);
	g.fillText("0", 0, H - 14);
	g.fillText("step " + (pts.length ? pts[0][0] : 0), PAD, H - 2);
	const lastTxt = "step " + (pts.length ? pts[pts.length - 1][1] : 0);
	g.fillText(lastTxt, W + 130 - g.measureText(lastTxt).width, H - 2);
	c.addEventListener("mousemove", (ev) => {
		const i = Math.floor((ev.offsetX - PAD) / bw), p = pts[i];
		if (!p) return hideTip();
		showTip(ev, (p[0] === p[1] ? "step " + p[0] : "steps " + p[0] + "-" + p[1] + " (longest shown; mean " + p[3] + " ms)") +
			"\n" + p[2] + " ms" + (p[4] ? ", mostly " + p[4].replace(/_/g, " ") : "") + (p[5] ? ", slow" : "") + (p[6] ? ", partial" : ""));
	});
	c.addEventListener("mouseleave", hideTip);
}
function buildSteps() {
	const list = D.steps || [];
	if (!list.length) $("steps").appendChild(el("p", "No GPU, no steps.", "muted"));
	for (const st of list) {
		const box = el("div"), s = strips.find((x) => x.key === st.key), name = s ? devName(s) : "GPU " + st.key;
		if (!st.found) {
			box.appendChild(el("p", name + ": no steps found: " + st.why_none + ".", "muted"));
			$("steps").appendChild(box);
			continue;
		}
		box.appendChild(el("p", name + ": " + st.complete + " whole steps (" + st.count + " in all), each ending at " + st.source +
			"; p50 " + fmtS(st.p50_s) + ", p90 " + fmtS(st.p90_s) + ", p99 " + fmtS(st.p99_s) + "; " + st.slow + " slow (over " +
			st.slow_factor + " x p50). Bars are coloured by the cause the step waited on most."));
		if (st.grouped > 1)
			box.appendChild(el("p", "The chart is bounded at " + (D.bounds || {}).step_points + " bars: each bar is the longest of " +
				st.grouped + " consecutive steps.", "note"));
		if (st.list_omitted)
			box.appendChild(el("p", st.list_omitted + " steps of the run's middle were folded into its totals and are not drawn.", "note"));
		stepChart(st, box);
		if (st.what_if && st.what_if.length) {
			const t = el("table"), head = el("tr");
			for (const h of ["without", "mean step (estimate)", "now", "steps touched"]) head.appendChild(el("th", h));
			t.appendChild(head);
			for (const w of st.what_if) {
				const tr = el("tr");
				for (const v of [w.cause, fmtS(w.mean_without_s), fmtS(w.mean_s), w.steps]) tr.appendChild(el("td", v));
				t.appendChild(tr);
			}
			box.appendChild(el("p", "What if a cause were gone: a first-order estimate, one cause at a time, not additive.", "note"));
			box.appendChild(t);
		}
		$("steps").appendChild(box);
	}
}

// ---- the page, and what it checked of itself --------------------------------
// Opened as PAGE#ig-zoom-test (tests/html.t): the first strip is zoomed
// with the wheel and dragged, through its own handlers, and the views
// it went through are noted.
function zoomTest() {
	const s = strips[0], r = s.canvas.getBoundingClientRect(), at = { clientX: r.left + W / 2, clientY: r.top + 5 };
	const views = [view.slice()];
	for (let i = 0; i < 5; i++)
		s.canvas.dispatchEvent(new WheelEvent("wheel", Object.assign({ deltaY: -100, cancelable: true }, at)));
	views.push(view.slice());
	s.canvas.dispatchEvent(new MouseEvent("mousedown", at));
	s.canvas.dispatchEvent(new MouseEvent("mousemove", { clientX: at.clientX + 200, clientY: at.clientY }));
	window.dispatchEvent(new MouseEvent("mouseup", at));
	views.push(view.slice());
	s.canvas.dispatchEvent(new MouseEvent("dblclick", at));
	views.push(view.slice());
	CHECK.zoom = views.map((v) => [v[0] - T0, v[1] - T0]);
}
function selfCheck() {
	CHECK.strips = strips.map((s) => ({ key: s.key, rect: docRect(s.canvas), seconds: s.seconds,
		bin_s: s.bin, nbins: s.nbins }));
	CHECK.width = W;
	CHECK.drawn = true;
	$("ig-check").textContent = JSON.stringify(CHECK);
}
try {
	header();
	buildStrips();
	const g = D.gpu || {};
	causesTable(D.causes, g.idle_s, "causes");
	causesTable(D.unresolved_causes, g.unresolved_s, "unresolved");
	buildFlame();
	buildSteps();
	if (location.hash === "#ig-zoom-test" && strips.length) zoomTest();
} catch (e) {
	CHECK.errors.push(String(e && e.stack || e));
	console.error(e);
}
selfCheck();
