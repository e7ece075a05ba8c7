// The interactive graph view (dataflow.viz.GraphView), run in the notebook's output:
// no server, no library. Python sends the nodes, the edges and each group's children
// already ranked and ordered (layout.py); this script only sizes the boxes for the
// groups open now, places them with layout.py's rule (rows, wrapped, centred) and
// draws SVG. A click on a collapsed group opens it, a click on an open group's title
// closes it.
(function (global) {
  "use strict";
  var NODE_H = 36, GROUP_H = 42, GAP_X = 16, GAP_Y = 34, PAD = 12, HEAD = 22, WRAP = 8;
  var CHAR_W = 6.6, MARGIN = 16;
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
    this.scale = 1;
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

  // graph_model.ViewModel.representative + svg.visible_edges.
  View.prototype.visibleEdges = function () {
    var d = this.d, rep = new Array(d.nodes.length), merged = {}, order = [];
    for (var i = 0; i < d.nodes.length; i++) {
      var p = d.nodes[i].parent;
      rep[i] = i;
      if (p >= 0 && (rep[p] !== p || !this.open[p])) rep[i] = rep[p];
    }
    d.edges.forEach(function (e) {
      var a = rep[e[0]], b = rep[e[1]];
      if (a === b) return;
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
      var labels = Object.keys(m.labels), label = labels.length ? labels[0] : "";
      if (m.count > 1 && (labels.length !== 1 || m.kind === 1)) label = labels.length ? m.count + " tensors" : "";
      return [m.a, m.b, m.kind, m.sr, label];
    });
  };

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
    button("\u2212", function () { self.scale /= 1.25; self.applyScale(); });
    button("+", function () { self.scale *= 1.25; self.applyScale(); });
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
    this.frame.style.cssText = "overflow:auto;max-height:640px;border:1px solid #ddd;background:white";
    this.root.appendChild(this.frame);
  };

  View.prototype.applyScale = function () {
    if (!this.svg) return;
    var w = this.width, h = this.height;
    var s = this.scale || Math.min(1, (this.frame.clientWidth || w) / w);
    this.svg.setAttribute("width", w * s);
    this.svg.setAttribute("height", h * s);
  };

  View.prototype.spreadEnds = function (edges, boxes) {
    var ends = edges.map(function () { return [0, 0]; });
    [[0, 1], [1, 0]].forEach(function (so) {
      var at = {};
      edges.forEach(function (e, k) { (at[e[so[0]]] = at[e[so[0]]] || []).push(k); });
      Object.keys(at).forEach(function (box) {
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

  View.prototype.draw = function () {
    var d = this.d, self = this, boxes = this.geometry();
    var W = Math.max(boxes[0][2], 420) + 2 * MARGIN, H = boxes[0][3] + 2 * MARGIN;
    this.width = W;
    this.height = H;
    this.frame.innerHTML = "";
    var svg = el("svg", {viewBox: "0 0 " + W + " " + H, "font-family": "Helvetica, Arial, sans-serif"});
    this.svg = svg;
    var uid = "df" + Math.random().toString(36).slice(2, 8);
    var defs = el("defs", {}, svg);
    [["e", d.edge], ["s", d.send_recv]].forEach(function (m) {
      var mk = el("marker", {id: uid + m[0], viewBox: "0 0 8 8", refX: 7, refY: 4,
        markerWidth: 7, markerHeight: 7, orient: "auto"}, defs);
      el("path", {d: "M0,0 L8,4 L0,8 z", fill: m[1]}, mk);
    });
    var top = el("g", {transform: "translate(" + MARGIN + "," + MARGIN + ")"}, svg);
    Object.keys(boxes).map(Number).sort(function (a, b) { return a - b; }).forEach(function (i) {
      if (i) self.drawBox(top, i, boxes[i]);
    });
    var edges = this.visibleEdges(), ends = this.spreadEnds(edges, boxes);
    edges.forEach(function (e, k) {
      var s = boxes[e[0]], t = boxes[e[1]], x1 = ends[k][0], x2 = ends[k][1];
      var y1 = s[1] + s[3], y2 = t[1], path, lx, ly;
      if (y2 > y1 + 4) {
        var bend = (y2 - y1) / 2;
        path = "M" + x1 + "," + y1 + " C" + x1 + "," + (y1 + bend) + " " + x2 + "," + (y2 - bend) + " " + x2 + "," + y2;
        lx = (x1 + x2) / 2; ly = (y1 + y2) / 2;
      } else {
        x1 = s[0] + s[2]; y1 = s[1] + s[3] / 2; x2 = t[0] + t[2]; y2 = t[1] + 10;
        var reach = Math.max(x1, x2) + 40;
        path = "M" + x1 + "," + y1 + " C" + reach + "," + y1 + " " + reach + "," + y2 + " " + x2 + "," + y2;
        lx = reach - 10; ly = (y1 + y2) / 2;
      }
      var stroke = e[3] ? d.send_recv : d.edge;
      var attrs = {d: path, fill: "none", stroke: stroke, "stroke-width": e[3] ? 1.8 : 1.1,
        "marker-end": "url(#" + uid + (e[3] ? "s" : "e") + ")"};
      if (e[2] === 1) attrs["stroke-dasharray"] = "4,3";
      el("path", attrs, top);
      if (e[4]) {
        var t2 = el("text", {x: lx + 3, y: ly, "font-size": 9, fill: stroke}, top);
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
      var st = el("text", {x: b[0] + b[2] - 4, y: b[1] + 10, "font-size": 8, fill: "#555",
        "text-anchor": "end"}, g);
      st.textContent = "s" + n.stage;
    }
  };

  global.dataflowGraphView = function (id, data) {
    var root = document.getElementById(id);
    if (root && !root.dataset.drawn) {
      root.dataset.drawn = "1";
      new View(root, data);
    }
  };
  // For tests/viz/test_graph_view.py, which compares the layout with layout.py's.
  global.dataflowGraphView.View = View;
})(window);
