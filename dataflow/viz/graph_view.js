// The interactive graph view (dataflow.viz.GraphView), run in the notebook's output:
// no server, no library. Python sends the nodes, the edges and each group's children
// already ranked and ordered (layout.py); this script only sizes the boxes for the
// groups open now, places them with layout.py's rule (rows, wrapped, centred), bundles
// and routes the edges and places their labels with routing.py's rules, and draws SVG,
// scaled at first to fit the whole graph in the cell. A click on a collapsed group opens it, a click on an open group's title
// closes it.
(function (global) {
  "use strict";
  var NODE_H = 36, GROUP_H = 42, GAP_X = 16, GAP_Y = 28, PAD = 12, HEAD = 20, WRAP = 8;
  var CHAR_W = 6.6, MARGIN = 16, CLEAR = 6, LANE = 12, CORNER = 8, LABEL_CHAR = 5.2, LABEL_H = 11, CELL = 64, CURVE_SAMPLES = 10;
  var SVGNS = "http://www.w3.org/2000/svg";

  function darker(hex) {
    var out = "#";
    for (var i = 1; i < 7; i += 2) {
      var v = Math.floor(parseInt(hex.substr(i, 2), 16) * 0.6);
      out += (v < 16 ? "0" : "") + v.toString(16);
    }
    return out;
  }

  function el(tag, attrs, parent) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  function View(root, data) {
    this.root = root;
    this.d = data;
    this.open = {};
    var self = this;
    data.expanded.forEach(function (g) { self.open[g] = true; });
    this.scale = 0;  // 0: fit the whole graph in the cell
    this.shown = 1;
    this.build();
    this.draw();
  }

  View.prototype.colour = function (i) {
    var p = this.d.palette;
    return i >= 0 ? p[i % p.length] : "#eeeeee";
  };

  View.prototype.boxSize = function (i) {
    var n = this.d.nodes[i];
    var sub = n.type !== undefined ? n.type : n.ops + " ops";
    var chars = Math.max(Math.min(n.label.length, 28), Math.min(sub.length, 28));
    var w = Math.min(Math.max(chars * CHAR_W + 20, 80), 210);
    return [w, n.type !== undefined ? NODE_H : GROUP_H];
  };

  // layout.geometry: sizes bottom-up (children come after their parent), then
  // absolute positions top-down.
  View.prototype.geometry = function () {
    var d = this.d, size = {}, rel = {}, self = this;
    for (var g = d.nodes.length - 1; g >= 0; g--) {
      if (!this.open[g] || d.nodes[g].type !== undefined) continue;
      var y = g ? HEAD : 0, width = this.boxSize(g)[0], rows = [];
      d.ranks[g].forEach(function (rank) {
        for (var s = 0; s < rank.length; s += WRAP) {
          var row = rank.slice(s, s + WRAP);
          var sizes = row.map(function (c) { return size[c] || self.boxSize(c); });
          var rw = sizes.reduce(function (a, b) { return a + b[0]; }, 0) + GAP_X * (row.length - 1);
          rows.push([row, sizes, rw]);
          width = Math.max(width, rw + 2 * PAD);
        }
      });
      rows.forEach(function (r) {
        var x = (width - r[2]) / 2, h = 0;
        r[0].forEach(function (c, j) {
          rel[c] = [x, y];
          x += r[1][j][0] + GAP_X;
          h = Math.max(h, r[1][j][1]);
        });
        y += h + GAP_Y;
      });
      size[g] = [width, y - GAP_Y + PAD];
    }
    var boxes = {0: [0, 0, size[0][0], size[0][1]]};
    for (var i = 1; i < d.nodes.length; i++) {
      var p = d.nodes[i].parent;
      if (boxes[p] && this.open[p]) {
        var s2 = size[i] || this.boxSize(i);
        boxes[i] = [boxes[p][0] + rel[i][0], boxes[p][1] + rel[i][1], s2[0], s2[1]];
      }
    }
    return boxes;
  };

  // graph_model.ViewModel.representative + routing.visible_edges: edges between
  // visible boxes, both ends lifted to the children of their lowest common group.
  View.prototype.visibleEdges = function () {
    var d = this.d, n = d.nodes.length, rep = new Array(n), depth = new Array(n);
    var merged = {}, order = [];
    for (var i = 0; i < n; i++) {
      var p = d.nodes[i].parent;
      rep[i] = i;
      depth[i] = p >= 0 ? depth[p] + 1 : 0;
      if (p >= 0 && (rep[p] !== p || !this.open[p])) rep[i] = rep[p];
    }
    d.edges.forEach(function (e) {
      var a = rep[e[0]], b = rep[e[1]];
      if (a === b) return;
      while (depth[a] > depth[b]) a = d.nodes[a].parent;
      while (depth[b] > depth[a]) b = d.nodes[b].parent;
      while (d.nodes[a].parent !== d.nodes[b].parent) { a = d.nodes[a].parent; b = d.nodes[b].parent; }
      var key = a + ">" + b, m = merged[key], label = d.labels[e[4]];
      if (!m) {
        merged[key] = m = {a: a, b: b, kind: e[2], sr: e[3], labels: {}, count: 0};
        order.push(m);
      }
      m.kind = Math.min(m.kind, e[2]);
      m.sr = m.sr || e[3];
      if (label) m.labels[label] = true;
      m.count += 1;
    });
    return order.map(function (m) {
      var labels = Object.keys(m.labels).sort(), label = labels.length === 1 ? labels[0] : "";
      if (m.count > 1 && (labels.length !== 1 || m.kind === 1)) label = labels.length ? m.count + " tensors" : "";
      return [m.a, m.b, m.kind, m.sr, label, m.count, labels.join(", ")];
    });
  };

  // routing.spread_ends.
  View.prototype.spreadEnds = function (edges, boxes) {
    var ends = edges.map(function () { return [0, 0]; });
    [[0, 1], [1, 0]].forEach(function (so) {
      var at = {}, keys = [];
      edges.forEach(function (e, k) {
        if (!at[e[so[0]]]) { at[e[so[0]]] = []; keys.push(e[so[0]]); }
        at[e[so[0]]].push(k);
      });
      keys.forEach(function (box) {
        var ks = at[box], b = boxes[box];
        ks.sort(function (p, q) {
          var bp = boxes[edges[p][so[1]]], bq = boxes[edges[q][so[1]]];
          return (bp[0] + bp[2] / 2) - (bq[0] + bq[2] / 2);
        });
        ks.forEach(function (k, j) {
          ends[k][so[0]] = b[0] + b[2] * (ks.length === 1 ? 0.5 : 0.15 + 0.7 * j / (ks.length - 1));
        });
      });
    });
    return ends;
  };

  // routing.route: down through the free gaps of the rows in between; up (or sideways)
  // through the gaps above the two rows and to the right of everything in between.
  function route(s, t, x1, x2, others) {
    var y1 = s[1] + s[3], y2 = t[1];
    if (y2 <= y1 + 4) {
      var sy = s[1], dy = t[1], lane1 = sy - LANE, lane2 = dy - LANE;
      x1 = s[0] + s[2] - 10; x2 = t[0] + t[2] - 10;
      if (lane2 >= lane1 - 2 * LANE) {
        var lane = Math.min(lane1, lane2);
        return [[[x1, sy], [x1, lane], [x2, lane], [x2, dy]], true];
      }
      var reach = Math.max(s[0] + s[2], t[0] + t[2]);
      others.forEach(function (o) {
        if (o[1] < sy && o[1] + o[3] > lane2) reach = Math.max(reach, o[0] + o[2]);
      });
      reach += LANE;
      return [[[x1, sy], [x1, lane1], [reach, lane1], [reach, lane2], [x2, lane2], [x2, dy]], true];
    }
    var rows = {}, tops = [];
    others.forEach(function (o) {
      if (o[1] < y2 && o[1] + o[3] > y1) {
        if (!rows[o[1]]) { rows[o[1]] = []; tops.push(o[1]); }
        rows[o[1]].push(o);
      }
    });
    tops.sort(function (a, b) { return a - b; });
    var points = [[x1, y1]];
    tops.forEach(function (top) {
      var row = rows[top], bandTop = Math.max(top, y1 + 10), bandBottom = -Infinity;
      row.forEach(function (o) { bandBottom = Math.max(bandBottom, o[1] + o[3]); });
      if (bandBottom <= bandTop) return;
      var c = points[points.length - 1], mid = (bandTop + bandBottom) / 2;
      var x = freeX(c[0] + (x2 - c[0]) * (mid - c[1]) / (y2 - c[1]), row);
      points.push([x, bandTop], [x, bandBottom]);
    });
    points.push([x2, y2]);
    return [points, false];
  }

  function freeX(want, row) {
    function blocked(x) {
      return row.some(function (o) { return o[0] - CLEAR < x && x < o[0] + o[2] + CLEAR; });
    }
    if (!blocked(want)) return want;
    var best = null;
    row.forEach(function (o) {
      [o[0] - CLEAR, o[0] + o[2] + CLEAR].forEach(function (x) {
        if (!blocked(x) && (best === null || Math.abs(x - want) < Math.abs(best - want))) best = x;
      });
    });
    return best === null ? want : best;
  }

  function pathData(points, back) {
    function f(p) { return p[0].toFixed(1) + "," + p[1].toFixed(1); }
    var out = "M" + f(points[0]);
    if (back) {  // rounded corners
      for (var i = 1; i + 1 < points.length; i++) {
        var a = points[i - 1], c = points[i], b = points[i + 1];
        var r = Math.min(CORNER, Math.abs(c[0] - a[0] + c[1] - a[1]) / 2, Math.abs(b[0] - c[0] + b[1] - c[1]) / 2);
        out += " L" + f([c[0] - r * Math.sign(c[0] - a[0]), c[1] - r * Math.sign(c[1] - a[1])]) +
          " Q" + f(c) + " " + f([c[0] + r * Math.sign(b[0] - c[0]), c[1] + r * Math.sign(b[1] - c[1])]);
      }
      return out + " L" + f(points[points.length - 1]);
    }
    for (var k = 1; k < points.length; k++) {
      var p = points[k - 1], q = points[k], m = (p[1] + q[1]) / 2;
      out += p[0] === q[0] ? " L" + f(q) : " C" + f([p[0], m]) + " " + f([q[0], m]) + " " + f(q);
    }
    return out;
  }

  // routing._anchors: where a label may go along a route, nearest the middle first.
  function anchors(points, back) {
    if (back) {
      var runs = [];
      for (var k = 1; k < points.length; k++) {
        var p = points[k - 1], q = points[k];
        runs.push([Math.abs(q[0] - p[0]) + Math.abs(q[1] - p[1]),
          [(p[0] + q[0]) / 2, (p[1] + q[1]) / 2 - (p[1] === q[1] ? 6 : 0)], k]);
      }
      return runs.sort(function (a, b) { return b[0] - a[0] || a[2] - b[2]; })
        .map(function (r) { return r[1]; });
    }
    var found = [];
    [0.5, 0.3, 0.7].forEach(function (t) {
      var s = t * t * (3 - 2 * t), f = 1.5 * t * (1 - t) + t * t * t;
      for (var k = 1; k < points.length; k++) {
        var p = points[k - 1], q = points[k];
        found.push([p[0] + (q[0] - p[0]) * s, p[1] + (q[1] - p[1]) * f]);
      }
    });
    var middle = (points[0][1] + points[points.length - 1][1]) / 2;
    return found.map(function (p, k) { return [p, k]; }).sort(function (a, b) {
      return Math.abs(a[0][1] - middle) - Math.abs(b[0][1] - middle) || a[1] - b[1];
    }).map(function (pk) { return pk[0]; });
  }

  function labelBox(x, y, text) { return [x - 1, y - 8, text.length * LABEL_CHAR + 2, LABEL_H]; }

  // routing._Grid: rectangles with owners, bucketed in square cells.
  function Grid() { this.cells = {}; }
  Grid.prototype.keys = function (r) {
    var out = [], x0 = Math.floor(r[0] / CELL), y0 = Math.floor(r[1] / CELL);
    var x1 = Math.floor((r[0] + r[2]) / CELL), y1 = Math.floor((r[1] + r[3]) / CELL);
    for (var i = x0; i <= x1; i++) for (var j = y0; j <= y1; j++) out.push(i + "," + j);
    return out;
  };
  Grid.prototype.add = function (owner, r) {
    var cells = this.cells;
    this.keys(r).forEach(function (k) { (cells[k] = cells[k] || []).push([owner, r]); });
  };
  Grid.prototype.hits = function (r, skip) {
    var cells = this.cells;
    return this.keys(r).some(function (k) {
      return (cells[k] || []).some(function (item) {
        var b = item[1];
        return item[0] !== skip && r[0] < b[0] + b[2] && b[0] < r[0] + r[2] && r[1] < b[1] + b[3] && b[1] < r[1] + r[3];
      });
    });
  };

  // routing.layout_edges: each bundle, its route and its label's place (or null).
  View.prototype.layoutEdges = function (boxes) {
    var d = this.d, self = this, edges = this.visibleEdges(), ends = this.spreadEnds(edges, boxes);
    var kids = d.nodes.map(function () { return []; }), taken = new Grid();
    d.nodes.forEach(function (n, i) { if (n.parent >= 0) kids[n.parent].push(i); });
    Object.keys(boxes).map(Number).sort(function (a, b) { return a - b; }).forEach(function (i) {
      var b = boxes[i];
      if (!i) return;
      var opened = d.nodes[i].type === undefined && self.open[i];
      taken.add(-1, opened ? [b[0], b[1], b[2], HEAD - 4] : b);
    });
    var routes = edges.map(function (e, k) {
      var others = kids[d.nodes[e[0]].parent].filter(function (c) { return c !== e[0] && c !== e[1]; })
        .map(function (c) { return boxes[c]; });
      return route(boxes[e[0]], boxes[e[1]], ends[k][0], ends[k][1], others);
    });
    routes.forEach(function (r, k) {  // a label keeps off the other routes' straight runs
      for (var j = 1; j < r[0].length; j++) {
        var p = r[0][j - 1], q = r[0][j];
        if (r[1] || p[0] === q[0]) {
          taken.add(k, [Math.min(p[0], q[0]) - 1, Math.min(p[1], q[1]), Math.abs(q[0] - p[0]) + 2,
            Math.abs(q[1] - p[1])]);
          continue;
        }
        for (var step = 1; step < CURVE_SAMPLES; step++) {  // a curve, as points along it
          var t = step / CURVE_SAMPLES, f = t * t * (3 - 2 * t), g = 1.5 * t * (1 - t) + t * t * t;
          taken.add(k, [p[0] + (q[0] - p[0]) * f - 1, p[1] + (q[1] - p[1]) * g - 1, 2, 2]);
        }
      }
    });
    var places = edges.map(function () { return null; });
    // The labels of the largest bundles are placed first.
    edges.map(function (e, k) { return k; }).sort(function (a, b) {
      return edges[b][5] - edges[a][5] || a - b;
    }).forEach(function (k) {
      var e = edges[k], at = null;
      if (!e[4]) return;
      var width = e[4].length * LABEL_CHAR, cands = anchors(routes[k][0], routes[k][1]);
      for (var c = 0; c < cands.length && at === null; c++) {
        [cands[c][0] + 4, cands[c][0] - 4 - width].forEach(function (lx) {
          if (at === null && !taken.hits(labelBox(lx, cands[c][1] + 3, e[4]), k)) at = [lx, cands[c][1] + 3];
        });
      }
      if (at !== null) taken.add(-1, labelBox(at[0], at[1], e[4]));
      places[k] = at;
    });
    return edges.map(function (e, k) { return [e, routes[k][0], routes[k][1], places[k]]; });
  };

  // routing.extent.
  function extent(drawn, root) {
    var right = root[2];
    drawn.forEach(function (r) {
      r[1].forEach(function (p) { right = Math.max(right, p[0] + 8); });
      if (r[3] !== null) right = Math.max(right, r[3][0] + r[0][4].length * LABEL_CHAR + 2);
    });
    return [right, root[3]];
  }

  View.prototype.build = function () {
    var self = this, bar = document.createElement("div");
    bar.style.cssText = "font:12px sans-serif;margin:4px 0;display:flex;gap:6px;align-items:center";
    function button(text, fn) {
      var b = document.createElement("button");
      b.textContent = text;
      b.style.cssText = "font:12px sans-serif;padding:1px 8px;cursor:pointer";
      b.onclick = fn;
      bar.appendChild(b);
    }
    button("\u2212", function () { self.scale = self.shown / 1.25; self.applyScale(); });
    button("+", function () { self.scale = self.shown * 1.25; self.applyScale(); });
    button("fit", function () { self.scale = 0; self.applyScale(); });
    button("collapse all", function () { self.open = {0: true}; self.draw(); });
    button("reset", function () {
      self.open = {};
      self.d.expanded.forEach(function (g) { self.open[g] = true; });
      self.draw();
    });
    var note = document.createElement("span");
    note.style.color = "#555";
    note.textContent = this.d.title + " \u2014 click a group to open or close it";
    bar.appendChild(note);
    this.root.appendChild(bar);
    this.frame = document.createElement("div");
    this.frame.style.cssText = "overflow:auto;max-height:calc(100vh - 120px);min-height:0;border:1px solid #ddd;background:white";
    this.root.appendChild(this.frame);
  };

  View.prototype.applyScale = function () {
    if (!this.svg) return;
    var w = this.width, h = this.height;
    var fitH = parseFloat(global.getComputedStyle(this.frame).maxHeight) || 640;
    var s = this.scale || Math.min(1, ((this.frame.clientWidth || w) - 4) / w, (fitH - 4) / h);
    this.shown = s;
    this.svg.setAttribute("width", w * s);
    this.svg.setAttribute("height", h * s);
  };

  View.prototype.draw = function () {
    var d = this.d, self = this, boxes = this.geometry(), drawn = this.layoutEdges(boxes);
    var size = extent(drawn, boxes[0]);
    var W = Math.max(size[0], 420) + 2 * MARGIN, H = size[1] + 2 * MARGIN;
    this.width = W;
    this.height = H;
    this.frame.innerHTML = "";
    var svg = el("svg", {viewBox: "0 0 " + W + " " + H, "font-family": "Helvetica, Arial, sans-serif"});
    this.svg = svg;
    var uid = "df" + Math.random().toString(36).slice(2, 8);
    var defs = el("defs", {}, svg);
    [["e", d.edge], ["s", d.send_recv]].forEach(function (m) {
      var mk = el("marker", {id: uid + m[0], viewBox: "0 0 8 8", refX: 7, refY: 4,
        markerWidth: 8, markerHeight: 8, markerUnits: "userSpaceOnUse", orient: "auto"}, defs);
      el("path", {d: "M0,0 L8,4 L0,8 z", fill: m[1]}, mk);
    });
    var top = el("g", {transform: "translate(" + MARGIN + "," + MARGIN + ")"}, svg);
    Object.keys(boxes).map(Number).sort(function (a, b) { return a - b; }).forEach(function (i) {
      if (i) self.drawBox(top, i, boxes[i]);
    });
    drawn.forEach(function (r) {
      var e = r[0], stroke = e[3] ? d.send_recv : d.edge;
      var attrs = {d: pathData(r[1], r[2]), fill: "none", stroke: stroke,
        "stroke-width": (e[3] ? 1.8 : 1.1) + Math.min(2, 0.6 * Math.log2(e[5])),
        "marker-end": "url(#" + uid + (e[3] ? "s" : "e") + ")"};
      if (e[2] === 1) attrs["stroke-dasharray"] = "4,3";
      var path = el("path", attrs, top), tip = el("title", {}, path);
      tip.textContent = (d.nodes[e[0]].name || "(root)") + " \u2192 " + d.nodes[e[1]].name + "\n" +
        e[5] + (e[5] === 1 ? " edge" : " edges") + (e[6] ? ": " + e[6] : "") + (e[3] ? "\nSend/Recv" : "");
      if (r[3] !== null) {
        var t2 = el("text", {x: r[3][0], y: r[3][1], "font-size": 9, fill: stroke}, top);
        t2.textContent = e[4];
      }
    });
    this.frame.appendChild(svg);
    this.applyScale();
  };

  View.prototype.drawBox = function (parent, i, b) {
    var d = this.d, n = d.nodes[i], self = this, isOp = n.type !== undefined;
    var g = el("g", {}, parent), fill = this.colour(n.device);
    var tip = el("title", {}, g);
    tip.textContent = n.name + "\n" + (isOp ? n.type : n.ops + " ops") + "\n" +
      (d.devices[n.device] || "") + (isOp ? "\nstage " + n.stage : "");
    if (!isOp && this.open[i]) {
      el("rect", {x: b[0], y: b[1], width: b[2], height: b[3], rx: 8, fill: "#fbfbfb",
        stroke: darker(fill), "stroke-width": 1.2}, g);
      var head = el("text", {x: b[0] + 8, y: b[1] + 15, "font-size": 11, "font-weight": "bold",
        cursor: "pointer"}, g);
      head.textContent = "\u2212 " + n.label;
      head.onclick = function () { delete self.open[i]; self.draw(); };
      return;
    }
    el("rect", {x: b[0], y: b[1], width: b[2], height: b[3], rx: isOp ? 4 : 10, fill: fill,
      stroke: darker(fill), "stroke-width": isOp ? 1 : 1.6}, g);
    var label = n.label.length <= 28 ? n.label : n.label.slice(0, 27) + "\u2026";
    var t1 = el("text", {x: b[0] + b[2] / 2, y: b[1] + 15, "font-size": 11, "text-anchor": "middle"}, g);
    t1.textContent = label;
    var t2 = el("text", {x: b[0] + b[2] / 2, y: b[1] + 28, "font-size": 9, fill: "#444",
      "text-anchor": "middle"}, g);
    t2.textContent = (isOp ? n.type : "+ " + n.ops + " ops").slice(0, 28);
    if (!isOp) {
      g.style.cursor = "pointer";
      g.onclick = function () { self.open[i] = true; self.draw(); };
      if (n.shares.length > 1) {
        var bx = b[0] + 6;
        n.shares.forEach(function (s) {
          var bw = (b[2] - 12) * s[1] / n.ops;
          el("rect", {x: bx, y: b[1] + b[3] - 8, width: bw, height: 4, fill: darker(self.colour(s[0]))}, g);
          bx += bw;
        });
      }
    } else if (d.stages > 1) {
      var st = el("text", {x: b[0] + b[2] - 4, y: b[1] + b[3] - 3, "font-size": 8, fill: "#555",
        "text-anchor": "end"}, g);
      st.textContent = "s" + n.stage;
    }
  };

  global.dataflowGraphView = function (id, data) {
    var root = document.getElementById(id);
    if (root && !root.dataset.drawn) {
      root.dataset.drawn = "1";
      root.innerHTML = "";  // the static SVG shown where no script runs
      var legend = document.getElementById(id + "-legend");
      if (legend) legend.style.display = "";
      new View(root, data);
    }
  };
  // For tests/viz/test_graph_view.py, which compares the layout with layout.py's.
  global.dataflowGraphView.View = View;
})(window);
