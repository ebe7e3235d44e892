// mcpvcr view: draws the session embedded in #data. Plain JavaScript,
// no network. Rows are absolutely positioned in a spacer; only those in
// view (plus a margin) are in the DOM once a session has more than LAZY
// rows, so that 10,000 frames open and scroll smoothly.
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('data').textContent);
  var ROW = 22, LAZY = 1000, LANE = 11;
  var $ = function (id) { return document.getElementById(id); };
  var list = $('list'), spacer = $('spacer'), rowsEl = $('rows'), detail = $('detail');
  var S, cur = 0;          // the session shown, and its index
  var rows = [];           // every row: {t:'f'|'o'|'e'|'k'|'ke', f, st, k, i}
  var view = [];           // the rows the filters let through
  var bySeq = {};          // seq -> row
  var lanes = 0, laneOf = []; // lane per stream (rows), how many
  var act = [];            // per row: lanes with a stream open across it
  var sel = null, shown = [-1, -1];
  var diffAt = {};         // seq -> [diff request] for the session shown
  var progress = {};       // request seq -> progress seqs
  var folded = {};         // task index + 1 -> its frames folded away
  var chaosAt = {}, chaosSt = {}; // seq, stream -> [index of a chaos fault] for the session shown

  // Every string of the data (which a stranger's cassette may have filled)
  // goes through esc on its way into markup, whatever field it came from.
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) { return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c]; });
  }
  function secs(us) { return (us / 1e6).toFixed(3) + 's'; }
  function dur(us) { return us < 1000 ? us + ' µs' : us < 1e6 ? (us / 1000).toFixed(1) + ' ms' : (us / 1e6).toFixed(2) + ' s'; }
  function rawText(f) {
    if (!f.b64) return f.r;
    try { return atob(f.r); } catch (e) { return f.r; }
  }
  function kindClass(k) {
    return {request: 1, result: 1, error: 1, notification: 1, batch: 1, invalid: 1, stderr: 1}[k] ? k : 'other';
  }
  function info(raw) {
    if (!raw) return '';
    return (raw.name || '?') + (raw.version ? ' ' + raw.version : '') + (raw.title ? ' (' + raw.title + ')' : '');
  }

  // --- building the rows of a session --------------------------------------
  function build() {
    rows = []; bySeq = {}; progress = {};
    var sts = S.streams, fs = S.frames;
    var last = sts.map(function () { return -1; }), lastOff = sts.map(function () { return 0; });
    fs.forEach(function (f) {
      if (f.t >= 0) { last[f.t] = f.s; lastOff[f.t] = f.o; }
      if (f.pr) (progress[f.pr] = progress[f.pr] || []).push(f.s);
    });
    var opens = sts.map(function (s, i) { return i; }).sort(function (a, b) { return sts[a].opened - sts[b].opened || a - b; });
    var ends = sts.map(function (s, i) { return i; }).filter(function (i) { return sts[i].end !== 'open' || sts[i].closed > 0; });
    var endAt = function (i) { return Math.max(sts[i].closed, lastOff[i]); };
    ends.sort(function (a, b) { return endAt(a) - endAt(b) || a - b; });
    var oi = 0, ei = 0, opened = {};
    function push(r) { r.i = rows.length; rows.push(r); }
    // Before a frame at offset off, the stream opens and ends due by then,
    // in time order (an end first on a tie); an end waits for its last frame.
    function until(off, seq) {
      for (;;) {
        while (oi < opens.length && opened[opens[oi]]) oi++;
        var to = oi < opens.length ? sts[opens[oi]].opened : Infinity;
        var k = ends[ei], canEnd = ei < ends.length && opened[k] && last[k] < seq, te = canEnd ? endAt(k) : Infinity;
        if (canEnd && te <= off && te <= to) { push({t: 'e', st: k}); ei++; continue; }
        if (oi < opens.length && to <= off) { opened[opens[oi]] = 1; push({t: 'o', st: opens[oi]}); oi++; continue; }
        return;
      }
    }
    // A task (S.tasks) begins with a row before the request that created
    // it and ends with one after its last frame.
    var tBegin = {}, tEnd = {};
    (S.tasks || []).forEach(function (t, k) {
      (tBegin[t.create] = tBegin[t.create] || []).push(k + 1);
      (tEnd[t.last] = tEnd[t.last] || []).push(k + 1);
    });
    fs.forEach(function (f) {
      until(f.o, f.s);
      if (f.t >= 0 && !opened[f.t]) { opened[f.t] = 1; push({t: 'o', st: f.t}); }
      (tBegin[f.s] || []).forEach(function (k) { push({t: 'k', k: k, st: -1}); });
      var r = {t: 'f', f: f, st: f.t};
      push(r); bySeq[f.s] = r;
      (tEnd[f.s] || []).forEach(function (k) { push({t: 'ke', k: k, st: -1}); });
    });
    until(Infinity, Infinity);
    for (; ei < ends.length; ei++) push({t: 'e', st: ends[ei]});
    // lanes: a stream keeps one lane from its open row to its end row (or
    // its last row); a lane is reused once free.
    var first = sts.map(function () { return -1; }), lastRow = sts.map(function () { return -1; });
    rows.forEach(function (r) {
      if (r.st < 0 || r.st === undefined) return;
      if (first[r.st] < 0) first[r.st] = r.i;
      lastRow[r.st] = r.i;
    });
    var order = sts.map(function (s, i) { return i; }).filter(function (i) { return first[i] >= 0; })
      .sort(function (a, b) { return first[a] - first[b]; });
    var free = []; laneOf = []; lanes = 0;
    order.forEach(function (k) {
      var l = 0;
      while (l < free.length && free[l] >= first[k]) l++;
      laneOf[k] = l; free[l] = lastRow[k]; lanes = Math.max(lanes, l + 1);
    });
    act = new Array(rows.length);
    var live = [];
    var starts = {}, stops = {};
    order.forEach(function (k) { (starts[first[k]] = starts[first[k]] || []).push(k); (stops[lastRow[k]] = stops[lastRow[k]] || []).push(k); });
    rows.forEach(function (r) {
      (starts[r.i] || []).forEach(function (k) { live.push(k); });
      act[r.i] = live.map(function (k) { return [laneOf[k], first[k] === r.i, lastRow[k] === r.i]; });
      (stops[r.i] || []).forEach(function (k) { live.splice(live.indexOf(k), 1); });
    });
    $('ghead').style.width = (lanes * LANE + 6) + 'px';
  }

  // --- filters ---------------------------------------------------------------
  function filters() {
    return {q: $('q').value.trim().toLowerCase(), m: $('method').value, d: $('dir').value, s: $('stream').value};
  }
  function apply() {
    var F = filters(), any = F.q || F.m || F.d;
    view = rows.filter(function (r) {
      if (r.t === 'k') return !any && F.s === '';
      if (r.t === 'ke') return !any && F.s === '' && !folded[r.k];
      if (F.s !== '' && r.st !== +F.s) return false;
      if (r.t !== 'f') return !any;
      var f = r.f;
      if (f.tk && folded[f.tk] && !any && F.s === '') return false;
      if (F.m && f.m !== F.m) return false;
      if (F.d !== '' && f.d !== +F.d) return false;
      if (F.q) {
        var st = S.streams[f.t];
        var hay = (f.m || '') + '\n' + (f.nm || '') + '\n' + (f.i || '') + '\n' + f.k + '\n' + (st ? st.label : '') + '\n' + rawText(f);
        if (hay.toLowerCase().indexOf(F.q) < 0) return false;
      }
      return true;
    });
    var n = 0;
    view.forEach(function (r) { if (r.t === 'f') n++; });
    $('count').textContent = (n === S.frames.length ? n : n + ' of ' + S.frames.length) + ' frames · ' + S.streams.length + ' streams';
    shown = [-1, -1];
    spacer.style.height = view.length * ROW + 'px';
    render(true);
  }

  // --- rows ------------------------------------------------------------------
  // The lanes are drawn on one canvas over the rows in the DOM, not per row:
  // far cheaper to lay out and paint than a small SVG in every row.
  var lanesCv = document.createElement('canvas');
  lanesCv.id = 'lanes';
  spacer.appendChild(lanesCv);
  var KC = {request: '#2563eb', result: '#16a34a', error: '#dc2626', notification: '#7c3aed', batch: '#0891b2', invalid: '#d97706', stderr: '#6b7280'};
  var EC = {complete: '#16a34a', 'server-closed': '#d97706', 'client-aborted': '#dc2626', 'upstream-error': '#dc2626'};
  // No style attribute in markup: the page's Content-Security-Policy
  // allows only its own stylesheet, so widths and offsets are set on the
  // elements (see render).
  function gutter() { return '<span class="c-g"></span>'; }
  function drawLanes(a, b) {
    var w = lanes * LANE + 6, h = Math.max(1, (b - a) * ROW), dpr = window.devicePixelRatio || 1;
    lanesCv.style.left = $('ghead').offsetLeft + 'px';
    lanesCv.style.top = (a * ROW) + 'px';
    lanesCv.style.width = w + 'px'; lanesCv.style.height = h + 'px';
    lanesCv.width = w * dpr; lanesCv.height = h * dpr;
    var g = lanesCv.getContext('2d');
    g.scale(dpr, dpr);
    g.lineWidth = 2; g.strokeStyle = '#cbd5e1';
    g.beginPath();
    for (var i = a; i < b; i++) {
      var y = (i - a) * ROW;
      act[view[i].i].forEach(function (l) {
        var x = l[0] * LANE + 6;
        g.moveTo(x, l[1] ? y + ROW / 2 : y); g.lineTo(x, l[2] ? y + ROW / 2 : y + ROW);
      });
    }
    g.stroke();
    for (i = a; i < b; i++) {
      var r = view[i], cy = (i - a) * ROW + ROW / 2;
      if (!(r.st >= 0) || laneOf[r.st] === undefined) continue;
      var cx = laneOf[r.st] * LANE + 6, c;
      g.beginPath();
      if (r.t === 'f') {
        c = KC[r.f.k] || '#94a3b8';
        if (r.f.k === 'notification') {
          g.moveTo(cx, cy - 5); g.lineTo(cx + 5, cy); g.lineTo(cx, cy + 5); g.lineTo(cx - 5, cy); g.closePath();
          g.fillStyle = c; g.fill();
        } else {
          g.arc(cx, cy, 4.5, 0, 7);
          g.fillStyle = r.f.k === 'result' || r.f.k === 'error' ? '#fff' : c; g.fill();
          g.strokeStyle = c; g.stroke();
        }
      } else if (r.t === 'o') {
        g.arc(cx, cy, 3, 0, 7); g.fillStyle = '#fff'; g.fill();
        g.lineWidth = 1.5; g.strokeStyle = '#64748b'; g.stroke(); g.lineWidth = 2;
      } else {
        g.fillStyle = EC[S.streams[r.st].end] || '#64748b';
        g.fillRect(cx - 4, cy - 4, 8, 8);
      }
      var cm = r.t === 'f' ? chaosAt[r.f.s] : r.t === 'o' ? chaosSt[r.st] : null;
      if (cm) { // a chaos fault: a square around the mark, red when its verdict failed
        g.lineWidth = 2; g.strokeStyle = VC[worst(cm)];
        g.strokeRect(cx - 7, cy - 7, 14, 14);
      }
    }
  }
  function streamWhat(st) {
    var s = st.method ? st.method + ' ' + st.url + (st.status ? ' → ' + st.status : '') : 'opened';
    if (st.ct) s += ' ' + st.ct.split(';')[0];
    if (st.resumes) {
      s += ' · resumes ' + S.streams[st.resumes - 1].label + ' after ' + (st.resumeAfter ? '#' + st.resumeAfter : 'event') + ' (Last-Event-ID ' + st.lastEventId + ')';
    } else if (st.lastEventId) s += ' · Last-Event-ID ' + st.lastEventId;
    return s;
  }
  function taskStates(t) { return t.states.length ? t.states.join(' → ') : 'no state seen'; }
  function taskRow(r, top) {
    var t = S.tasks[r.k - 1];
    if (r.t === 'k') {
      return '<div class="row tkh' + (folded[r.k] ? ' folded' : '') + '" data-task="' + r.k + '" ' + top + ' title="click to fold or unfold the task\'s frames">' +
        '<span class="c-seq"></span><span class="c-off">' + secs(t.opened) + '</span>' + gutter() + '<span class="c-dir">' + (folded[r.k] ? '▸' : '▾') + '</span>' +
        '<span class="c-st">' + esc(t.label) + '</span><span class="c-wide"><b>task</b> ' + esc(t.what) + ' · ' + esc(t.runner) + ' runs it · ' +
        '<span class="tks">' + esc(taskStates(t)) + '</span> · ' + t.polls + ' polls · ' + t.notified + ' status' + (t.result ? ' · result #' + t.result : '') +
        ' · ' + dur(t.closed - t.opened) + ' · id ' + esc(t.id) + '</span></div>';
    }
    return '<div class="row tke" data-task="' + r.k + '" ' + top + '><span class="c-seq"></span><span class="c-off">' + secs(t.closed) + '</span>' + gutter() +
      '<span class="c-dir">└</span><span class="c-st">' + esc(t.label) + '</span><span class="c-wide">end · <span class="tks">' + esc(taskStates(t)) + '</span></span></div>';
  }
  function rowHTML(r, i) {
    var top = 'data-top="' + (i * ROW) + '"';
    if (r.t === 'k' || r.t === 'ke') return taskRow(r, top);
    var st = r.st >= 0 ? S.streams[r.st] : null;
    if (r.t === 'o') {
      return '<div class="row o' + chaosClass(chaosSt[r.st]) + '" data-st="' + r.st + '" ' + top + '><span class="c-seq"></span><span class="c-off">' + secs(st.opened) + '</span>' +
        gutter() + '<span class="c-dir">◦</span><span class="c-st">' + esc(st.label) + '</span><span class="c-wide">' + chaosFlags(chaosSt[r.st]) + esc(streamWhat(st)) + '</span></div>';
    }
    if (r.t === 'e') {
      return '<div class="row e end-' + esc(st.end) + '" data-st="' + r.st + '" ' + top + '><span class="c-seq"></span><span class="c-off">' + secs(st.closed) + '</span>' +
        gutter() + '<span class="c-dir">▪</span><span class="c-st">' + esc(st.label) + '</span><span class="c-wide"><span class="end">' + esc(st.end) + '</span>' +
        (st.err ? ' · ' + esc(st.err) : '') + '</span></div>';
    }
    var f = r.f, x = '', fl = '';
    if (f.ans) x = '→ #' + f.ans + ' · ' + dur(f.dur);
    else if (f.req) x = '← #' + f.req + ' · ' + dur(f.dur);
    else if (f.pr) x = 'progress of #' + f.pr;
    else if (f.cx) x = 'cancels #' + f.cx;
    if (f.tk) fl += '<span class="fl tkf">' + esc(S.tasks[f.tk - 1].label + ' ' + f.tr) + '</span>';
    if (f.n) fl += '<span class="fl">batch(' + f.n + ')</span>';
    if (f.x) fl += '<span class="fl bad">malformed</span>';
    if (f.cxd) fl += '<span class="fl cx">cancelled by #' + f.cxd + '</span>';
    if (f.acx) fl += '<span class="fl cx">after-cancel #' + f.acx + '</span>';
    if (f.eid !== undefined) fl += '<span class="fl">id=' + esc(f.eid) + '</span>';
    if (f.ev) fl += '<span class="fl">event=' + esc(f.ev) + '</span>';
    if (f.rt !== undefined) fl += '<span class="fl">retry=' + f.rt + '</span>';
    if (progress[f.s]) fl += '<span class="fl">' + progress[f.s].length + ' progress</span>';
    if (diffAt[f.s]) fl += '<span class="fl cx">Δ ' + esc(diffAt[f.s][0].status) + '</span>';
    var cls = 'row f k-' + kindClass(f.k) + ' d' + f.d + (f.tk ? ' tk' : '') + (sel === f.s ? ' sel' : '') + (diffAt[f.s] ? ' dif' : '') + chaosClass(chaosAt[f.s]);
    fl = chaosFlags(chaosAt[f.s]) + fl;
    return '<div class="' + cls + '" data-seq="' + f.s + '" data-method="' + esc(f.m || '') + '" ' + top + '><span class="c-seq">' + f.s + '</span><span class="c-off">' + secs(f.o) + '</span>' +
      gutter() + '<span class="c-dir" title="' + (f.d ? 'server → client' : 'client → server') + '">' + (f.d ? '←' : '→') + '</span><span class="c-st">' + esc(st ? st.label : '') +
      '</span><span class="c-k"><b>' + esc(f.k) + '</b></span><span class="c-m" title="' + esc((f.m || '') + (f.nm ? ' ' + f.nm : '')) + '">' + esc(f.m || '') +
      (f.nm ? ' <i>' + esc(f.nm) + '</i>' : '') + '</span><span class="c-id">' + esc(f.i || '') +
      '</span><span class="c-x">' + x + '</span><span class="c-fl">' + fl + '</span></div>';
  }
  function render(force) {
    var n = view.length, a = 0, b = n;
    if (n > LAZY) {
      var top = list.scrollTop, h = list.clientHeight || 800;
      a = Math.max(0, Math.floor(top / ROW) - 5);
      b = Math.min(n, Math.ceil((top + h) / ROW) + 5);
      if (!force && a >= shown[0] && b <= shown[1]) return;
      a = Math.max(0, a - 25); b = Math.min(n, b + 25);
    } else if (!force && shown[0] === 0 && shown[1] === n) return;
    var out = [];
    for (var i = a; i < b; i++) out.push(rowHTML(view[i], i));
    rowsEl.innerHTML = out.join('');
    var gw = (lanes * LANE + 6) + 'px';
    Array.prototype.forEach.call(rowsEl.children, function (el) {
      el.style.top = el.dataset.top + 'px';
      var g = el.querySelector('.c-g');
      if (g) g.style.width = gw;
    });
    drawLanes(a, b);
    shown = [a, b];
  }
  var pending = false;
  list.addEventListener('scroll', function () {
    if (pending || view.length <= LAZY) return;
    pending = true;
    requestAnimationFrame(function () { pending = false; render(false); });
  });

  // --- detail ------------------------------------------------------------------
  function pretty(text) {
    // Re-indents JSON text without parsing it into numbers, so that the
    // values and key order shown are those on the wire.
    var out = '', ind = 0, i = 0, n = text.length, nl = function () { return '\n' + '  '.repeat(ind); };
    var t = text.trim();
    if (!t || (t[0] !== '{' && t[0] !== '[')) return null;
    try { JSON.parse(t); } catch (e) { return null; }
    text = t; n = text.length;
    while (i < n) {
      var c = text[i];
      if (c === '"') {
        var j = i + 1;
        while (j < n && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
        var str = text.slice(i, j + 1), k = j + 1;
        while (k < n && /\s/.test(text[k])) k++;
        out += '<span class="' + (text[k] === ':' ? 'p' : 's') + '">' + esc(str) + '</span>';
        i = j + 1; continue;
      }
      if (c === '{' || c === '[') {
        var k2 = i + 1;
        while (k2 < n && /\s/.test(text[k2])) k2++;
        if (text[k2] === (c === '{' ? '}' : ']')) { out += c + text[k2]; i = k2 + 1; continue; }
        ind++; out += c + nl(); i++; continue;
      }
      if (c === '}' || c === ']') { ind--; out += nl() + c; i++; continue; }
      if (c === ',') { out += ',' + nl(); i++; continue; }
      if (c === ':') { out += ': '; i++; continue; }
      if (/\s/.test(c)) { i++; continue; }
      var m = /^(-?\d[\d.eE+-]*|true|false|null)/.exec(text.slice(i, i + 400));
      if (m) { out += '<span class="' + (/^[tfn]/.test(m[1]) ? 'b' : 'n') + '">' + m[1] + '</span>'; i += m[1].length; continue; }
      out += esc(c); i++;
    }
    return out;
  }
  function sseData(raw) {
    var lines = raw.split(/\r\n|\r|\n/), d = [];
    lines.forEach(function (l) { if (l.indexOf('data:') === 0) d.push(l.slice(5).replace(/^ /, '')); });
    return d.join('\n');
  }
  function link(seq, label) { return '<a data-go="' + seq + '">' + (label || '#' + seq) + '</a>'; }
  function headers(title, hs) {
    if (!hs || !hs.length) return '';
    return '<h3>' + title + '</h3><table class="h">' + hs.map(function (h) { return '<tr><td>' + esc(h[0]) + '</td><td>' + esc(h[1]) + '</td></tr>'; }).join('') + '</table>';
  }
  function showStream(k) {
    var st = S.streams[k];
    detail.innerHTML = '<h2>' + esc(st.label) + ' <span class="pill">' + esc(st.kind) + '</span> <span class="end end-' + esc(st.end) + '">' + esc(st.end) + '</span></h2><dl>' +
      (st.method ? '<dt>request</dt><dd>' + esc(st.method + ' ' + st.url) + '</dd><dt>status</dt><dd>' + (st.status || '–') + (st.ct ? ' · ' + esc(st.ct) : '') + '</dd>' : '') +
      '<dt>opened</dt><dd>' + secs(st.opened) + '</dd><dt>closed</dt><dd>' + (st.closed ? secs(st.closed) : 'open') + '</dd>' +
      (st.err ? '<dt>error</dt><dd>' + esc(st.err) + '</dd>' : '') +
      (st.resumes ? '<dt>resumes</dt><dd>' + esc(S.streams[st.resumes - 1].label) + (st.resumeAfter ? ' after ' + link(st.resumeAfter) : '') + ' (Last-Event-ID ' + esc(st.lastEventId) + ')</dd>' : '') +
      '</dl>' + chaosDetail(chaosSt[k]) + headers('request headers', st.reqH) + headers('response headers', st.respH);
  }
  function showTask(k) {
    var t = S.tasks[k - 1], by = {};
    S.frames.forEach(function (f) { if (f.tk === k) (by[f.tr] = by[f.tr] || []).push(f.s); });
    var h = '<h2>' + esc(t.label) + ' <span class="pill">task</span> ' + esc(t.what) + '</h2><dl>' +
      '<dt>task id</dt><dd>' + esc(t.id) + '</dd><dt>runs on</dt><dd>' + esc(t.runner) + '</dd>' +
      '<dt>states</dt><dd>' + esc(taskStates(t)) + '</dd>' +
      '<dt>created</dt><dd>' + link(t.create) + ' at ' + secs(t.opened) + ', answered by ' + link(t.created) + '</dd>' +
      '<dt>last frame</dt><dd>' + link(t.last) + ' at ' + secs(t.closed) + ' (' + dur(t.closed - t.opened) + ' after the creation)</dd>';
    ['poll', 'status', 'result', 'cancel', 'related'].forEach(function (role) {
      if (by[role]) h += '<dt>' + role + '</dt><dd>' + by[role].map(function (s) { return link(s); }).join(' ') + '</dd>';
    });
    detail.innerHTML = h + '</dl>';
  }
  function showFrame(f) {
    var st = f.t >= 0 ? S.streams[f.t] : null, raw = rawText(f);
    var h = '<h2><a class="perma" href="#' + anchor(f.s) + '" title="a link to this frame, to cite">#' + f.s + '</a> <span class="pill ' + (f.d ? 'd1' : 'd0') + '">' + (f.d ? 'server → client' : 'client → server') + '</span> ' +
      '<span class="pill">' + esc(f.k) + '</span> ' + esc(f.m || '') + (f.nm ? ' <i class="nm">' + esc(f.nm) + '</i>' : '') + '</h2><dl>';
    h += '<dt>stream</dt><dd><a data-st="' + f.t + '">' + esc(st ? st.label : '–') + '</a>' + (st && st.method ? ' · ' + esc(st.method + ' ' + st.url) : '') + '</dd>';
    h += '<dt>offset</dt><dd>' + secs(f.o) + '</dd>';
    if (f.i) h += '<dt>id</dt><dd>' + esc(f.i) + '</dd>';
    if (f.ans) h += '<dt>answered by</dt><dd>' + link(f.ans) + ' after ' + dur(f.dur) + '</dd>';
    if (f.req) h += '<dt>answers</dt><dd>' + link(f.req) + ' (' + esc(f.m || '') + ') after ' + dur(f.dur) + '</dd>';
    if (progress[f.s]) h += '<dt>progress</dt><dd>' + progress[f.s].map(function (s) { return link(s); }).join(' ') + '</dd>';
    if (f.pr) h += '<dt>progress of</dt><dd>' + link(f.pr) + '</dd>';
    if (f.cx) h += '<dt>cancels</dt><dd>' + link(f.cx) + '</dd>';
    if (f.cxd) h += '<dt>cancelled by</dt><dd>' + link(f.cxd) + '</dd>';
    if (f.acx) h += '<dt>sent after the cancellation</dt><dd>' + link(f.acx) + '</dd>';
    if (f.tk) h += '<dt>task</dt><dd><a data-task="' + f.tk + '">' + esc(S.tasks[f.tk - 1].label) + '</a> · ' + esc(f.tr) + '</dd>';
    if (f.eid !== undefined) h += '<dt>SSE id</dt><dd>' + esc(f.eid) + '</dd>';
    if (f.ev) h += '<dt>SSE event</dt><dd>' + esc(f.ev) + '</dd>';
    if (f.rt !== undefined) h += '<dt>SSE retry</dt><dd>' + f.rt + ' ms</dd>';
    if (f.n) h += '<dt>batch</dt><dd>' + f.n + ' messages</dd>';
    if (f.x) h += '<dt>malformed</dt><dd>not valid JSON-RPC</dd>';
    h += '<dt>size</dt><dd>' + raw.length + (f.b64 ? ' bytes (not UTF-8; shown decoded as Latin-1)' : ' characters') + '</dd></dl>';
    (diffAt[f.s] || []).forEach(function (rq) {
      h += '<h3>differences (' + esc(rq.status) + ')</h3>' + changesHTML(rq);
    });
    h += chaosDetail(chaosAt[f.s]);
    var json = pretty(st && /event-stream/.test(st.ct || '') || f.eid !== undefined || f.ev ? sseData(raw) : raw);
    if (json) h += '<h3>JSON</h3><pre id="json">' + json + '</pre>';
    h += '<h3>bytes, exactly as on the wire</h3><pre id="raw"></pre>';
    detail.innerHTML = h;
    $('raw').textContent = raw;
  }
  function select(seq, scroll) {
    var r = bySeq[seq];
    if (!r) return;
    sel = seq;
    var vi = view.indexOf(r);
    if (vi < 0 && r.f.tk && folded[r.f.tk]) { folded[r.f.tk] = false; apply(); vi = view.indexOf(r); } // unfold its task
    if (vi < 0) { $('q').value = ''; $('method').value = ''; $('dir').value = ''; $('stream').value = ''; apply(); vi = view.indexOf(r); }
    if (scroll) {
      var y = vi * ROW, top = list.scrollTop, h = list.clientHeight - ROW * 2;
      if (y < top || y > top + h) list.scrollTop = Math.max(0, y - list.clientHeight / 3);
    }
    render(true);
    showFrame(r.f);
    if (location.hash !== '#' + anchor(seq)) history.replaceState(null, '', '#' + anchor(seq));
  }
  // anchor is the URL fragment of frame seq: #seq, or #sID-seq on a page of
  // several sessions. Opening the page with it selects the frame.
  function anchor(seq) { return D.sessions.length < 2 ? String(seq) : 's' + S.id + '-' + seq; }
  function follow() {
    var m = /^#(?:s(\d+)-)?(\d+)$/.exec(location.hash);
    if (!m) return false;
    var i = m[1] ? D.sessions.findIndex(function (s) { return String(s.id) === m[1]; }) : cur;
    if (i < 0) return false;
    if (i !== cur) show(i);
    select(+m[2], true);
    return true;
  }
  rowsEl.addEventListener('click', function (e) {
    var el = e.target.closest('.row');
    if (!el) return;
    if (el.dataset.seq) select(+el.dataset.seq, false);
    else if (el.dataset.task && el.classList.contains('tkh')) { // fold or unfold the task's frames
      var k = +el.dataset.task;
      folded[k] = !folded[k];
      apply();
      showTask(k);
    } else if (el.dataset.task) showTask(+el.dataset.task);
    else if (el.dataset.st) showStream(+el.dataset.st);
  });
  detail.addEventListener('click', function (e) {
    var a = e.target.closest('a');
    if (!a) return;
    if (a.dataset.go) select(+a.dataset.go, true);
    else if (a.dataset.task) showTask(+a.dataset.task);
    else if (a.dataset.st !== undefined && +a.dataset.st >= 0) showStream(+a.dataset.st);
  });
  document.addEventListener('keydown', function (e) {
    if (e.target.tagName === 'INPUT' || e.target.tagName === 'SELECT') {
      if (e.key === 'Escape') e.target.blur();
      return;
    }
    if (e.key === '/') { e.preventDefault(); $('q').focus(); return; }
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp' && e.key !== 'j' && e.key !== 'k') return;
    e.preventDefault();
    var fr = view.filter(function (r) { return r.t === 'f'; });
    if (!fr.length) return;
    var i = fr.indexOf(bySeq[sel]);
    i = e.key === 'ArrowDown' || e.key === 'j' ? Math.min(fr.length - 1, i + 1) : Math.max(0, i - 1);
    select(fr[i].f.s, true);
  });
  ['q', 'method', 'dir', 'stream'].forEach(function (id) { $(id).addEventListener(id === 'q' ? 'input' : 'change', apply); });

  // --- overview ------------------------------------------------------------------
  function overview() {
    var cv = $('overview'), sts = S.streams, fs = S.frames;
    var end = 1;
    fs.forEach(function (f) { end = Math.max(end, f.o); });
    sts.forEach(function (s) { end = Math.max(end, s.closed, s.opened); });
    var order = sts.map(function (s, i) { return i; }).sort(function (a, b) { return sts[a].opened - sts[b].opened; });
    var free = [], lane = [];
    order.forEach(function (k) {
      var l = 0, stop = sts[k].closed || end;
      while (l < free.length && free[l] > sts[k].opened) l++;
      lane[k] = l; free[l] = stop + end * 0.004;
    });
    var nl = Math.max(1, free.length), lh = Math.max(4, Math.min(12, Math.floor(96 / nl)));
    var H = nl * lh + 14, W = cv.clientWidth || 1000, dpr = window.devicePixelRatio || 1;
    cv.style.height = H + 'px'; cv.width = W * dpr; cv.height = H * dpr;
    var g = cv.getContext('2d');
    g.scale(dpr, dpr);
    var X = function (us) { return 8 + (W - 16) * us / end; };
    g.font = '10px system-ui, sans-serif'; g.fillStyle = '#94a3b8';
    for (var t = 0; t <= 4; t++) g.fillText(secs(end * t / 4), Math.min(W - 44, X(end * t / 4)), H - 2);
    sts.forEach(function (s, k) {
      var y = lane[k] * lh + 2;
      g.fillStyle = '#e2e8f0'; g.fillRect(X(s.opened), y + lh / 2 - 1.5, Math.max(2, X(s.closed || end) - X(s.opened)), 3);
      if (s.end !== 'open') {
        g.fillStyle = {complete: '#16a34a', 'server-closed': '#d97706', 'client-aborted': '#dc2626', 'upstream-error': '#dc2626'}[s.end] || '#64748b';
        g.fillRect(X(s.closed) - 1.5, y + 1, 3, lh - 2);
      }
    });
    fs.forEach(function (f) {
      if (f.t < 0) return;
      g.fillStyle = {request: '#2563eb', result: '#16a34a', error: '#dc2626', notification: '#7c3aed', stderr: '#6b7280', invalid: '#d97706'}[f.k] || '#94a3b8';
      g.fillRect(X(f.o) - 0.75, lane[f.t] * lh + 2 + 1, 1.5, lh - 2);
    });
    Object.keys(chaosAt).concat(Object.keys(chaosSt).map(function (k) { return 'st' + k; })).forEach(function (key) {
      var st = key.indexOf('st') === 0, r = st ? null : bySeq[key], k = st ? +key.slice(2) : r ? r.f.t : -1;
      if (k < 0 || lane[k] === undefined) return;
      var x = X(st ? sts[k].opened : r.f.o), y = lane[k] * lh + 2;
      g.fillStyle = VC[worst(st ? chaosSt[k] : chaosAt[key])];
      g.beginPath(); g.moveTo(x - 4, y); g.lineTo(x + 4, y); g.lineTo(x, y + Math.max(5, lh)); g.closePath(); g.fill();
    });
    cv.onclick = function (e) {
      var us = (e.offsetX - 8) / (W - 16) * end, best = null;
      fs.forEach(function (f) { if (!best || Math.abs(f.o - us) < Math.abs(best.o - us)) best = f; });
      if (best) select(best.s, true);
    };
  }

  // --- header, diffs, sessions ------------------------------------------------------
  function meta() {
    var m = [], labels = S.labels || {};
    function add(k, v, title) { if (v) m.push('<div><dt>' + esc(k) + '</dt><dd title="' + esc(title || v) + '">' + esc(v) + '</dd></div>'); }
    $('title').textContent = 'Session ' + S.id + (S.name ? ' · ' + S.name : '');
    m.push('<div><dt>transport</dt><dd><span class="pill">' + esc(S.transport) + '</span>' + (S.revision ? '<span class="pill">' + esc(S.revision) + '</span>' : '') +
      (S.era ? '<span class="pill">' + esc(S.era) + '</span>' : '') + '</dd></div>');
    add('client', info(S.client_info)); add('server', info(S.server_info));
    add('upstream', S.upstream);
    add('session id', S.external_id);
    // started_at is RFC 3339 in UTC: shown to the second, as ls shows it.
    if (S.started_at) add('started', S.started_at.replace('T', ' ').replace(/\.\d+/, '').replace(/Z$/, ' UTC'));
    if (S.durationUs) add('duration', S.durationUs < 0 ? 'open' : dur(S.durationUs));
    if (S.transport === 'stdio' && S.ended_at) add('exit', String(S.exit_code));
    Object.keys(labels).sort().forEach(function (k) {
      var v = labels[k], short = k.replace(/^mcpvcr\./, '');
      if (k === 'mcpvcr.noise') add('noise mask', v.split('\n').filter(Boolean).length + ' paths', v);
      else add(short, v);
    });
    add('note', S.note);
    $('meta').innerHTML = m.join('');
  }
  function changesHTML(rq) {
    var h = rq.reason ? '<div class="chg">' + esc(rq.reason) + '</div>' : '';
    (rq.changes || []).forEach(function (c) {
      h += '<div class="chg">' + esc(c.change) + ' ' + esc(c.path) +
        (c.old !== undefined ? '\n  <span class="o">- ' + esc(JSON.stringify(c.old)) + '</span>' : '') +
        (c['new'] !== undefined ? '\n  <span class="n">+ ' + esc(JSON.stringify(c['new'])) + '</span>' : '') + '</div>';
    });
    return h;
  }
  function diffs() {
    diffAt = {};
    var ds = D.diffs || [];
    if (!ds.length) return;
    var sec = $('diffs'), h = '';
    // Several sessions compared, as the text report: each difference
    // found in several of them (repeated_in, marked by diff.Summarize)
    // listed once on top, each session's own below, and a line adding
    // them all up.
    var many = ds.length > 1, rep = [], repAt = {}, total = {sessions: ds.length, differ: 0, reqs: 0, bad: 0};
    function repKey(r) { return JSON.stringify([r.method || '', r.name || '', r.status, r.reason || '', r.changes || []]); }
    function label(r, seq) { return (r.method || 'server traffic') + (r.name ? ' ' + r.name : '') + (!seq ? '' : r.seq ? ' (seq ' + r.seq + ')' : r.new_seq ? ' (new seq ' + r.new_seq + ')' : ''); }
    var body = '';
    ds.forEach(function (d, di) {
      // Counted as the text report counts: the client's requests; the
      // server's own traffic is said apart. Calls verify's write guard
      // skipped are listed, but do not differ.
      var reqs = d.requests || [];
      var bad = reqs.concat(d.server ? [d.server] : []).filter(function (r) { return r.status !== 'same'; });
      var differ = reqs.filter(function (r) { return r.status !== 'same' && r.status !== 'skipped'; }).length;
      var server = d.server && d.server.status !== 'same' && d.server.status !== 'skipped';
      var head = differ ? differ + ' of ' + reqs.length + ' requests differ' : 'no differences in ' + reqs.length + ' requests';
      if (server) head += differ ? '; the server\u2019s own requests or notifications differ too' : ', but the server\u2019s own requests or notifications differ';
      total.reqs += reqs.length; total.bad += differ;
      if (differ || server) total.differ++;
      var h = '<h2>Session ' + esc(d.old.id) + ' → session ' + esc(d['new'].id) + ': ' + head + '</h2>', left = 0;
      bad.forEach(function (r, ri) {
        var row = '<div class="drq" data-d="' + di + '" data-r="' + ri + '"><span class="st">' + esc(r.status) + '</span>';
        if (many && r.repeated_in && r.repeated_in.length > 1) {
          left++;
          var k = repKey(r);
          if (!repAt[k]) {
            repAt[k] = true;
            rep.push(row + 'in sessions ' + esc(r.repeated_in.join(', ')) + (r.repeated_in.length === ds.length ? ', every session compared' : '') + ': ' + esc(label(r, false)) + changesHTML(r) + '</div>');
          }
          return;
        }
        h += row + esc(label(r, true)) + changesHTML(r) + '</div>';
      });
      if (left) h += '<div class="chg">(and ' + left + ' difference' + (left === 1 ? '' : 's') + ' listed above, repeated in other sessions)</div>';
      (d.notes || []).forEach(function (n) { h += '<div class="chg">' + esc(n) + '</div>'; });
      body += h;
      bad.forEach(function (r) {
        if (S.id === d.old.id && r.seq) (diffAt[r.seq] = diffAt[r.seq] || []).push(r);
        if (S.id === d['new'].id && r.new_seq) (diffAt[r.new_seq] = diffAt[r.new_seq] || []).push(r);
      });
      d._bad = bad;
    });
    if (rep.length) h += '<h2 class="repeated">' + rep.length + ' difference' + (rep.length === 1 ? '' : 's') + ' repeated in several sessions, listed once</h2>' + rep.join('');
    h += body;
    if (many) h += '<h2 class="total">in all: ' + total.sessions + ' sessions compared, ' + total.differ + ' with differences; ' + total.bad + ' of ' + total.reqs + ' requests differ</h2>';
    sec.innerHTML = h; sec.hidden = false;
    sec.onclick = function (e) {
      var el = e.target.closest('.drq');
      if (!el) return;
      var d = ds[+el.dataset.d], r = d._bad[+el.dataset.r];
      var want = r.seq ? d.old.id : d['new'].id, seq = r.seq || r.new_seq;
      D.sessions.forEach(function (s, i) { if (s.id === want && i !== cur) show(i); });
      if (seq) select(seq, true);
    };
  }
  // --- chaos ------------------------------------------------------------------
  // A chaos replay run (D.chaos): a summary on top, each fault listed with
  // its verdict, and marked where it was placed (f.at, a frame; else the
  // opening row of stream f.st) on the timeline of its session.
  var VC = {fail: '#dc2626', pass: '#16a34a', 'not observed': '#d97706', 'not reached': '#64748b'};
  function vcls(v) { return 'v-' + ({fail: 'fail', pass: 'pass', 'not observed': 'unseen', 'not reached': 'unreached'}[v] || 'unseen'); }
  function worst(is) {
    var order = ['fail', 'not observed', 'not reached', 'pass'], best = 3;
    is.forEach(function (i) { var k = order.indexOf(D.chaos.faults[i].verdict); if (k >= 0 && k < best) best = k; });
    return order[best];
  }
  function chaosClass(is) { return is ? ' chaos ' + vcls(worst(is)) : ''; }
  function chaosFlags(is) {
    return (is || []).map(function (i) {
      var f = D.chaos.faults[i];
      return '<span class="fl ch ' + vcls(f.verdict) + '" title="' + esc(f.what + ' · ' + f.verdict) + '">⚡ ' + esc(f.kind) + ': ' + esc(f.verdict) + '</span>';
    }).join('');
  }
  function chaosFails(id) {
    return D.chaos && D.chaos.faults.some(function (f) { return f.session === id && f.verdict === 'fail'; });
  }
  function chaosDetail(is) {
    return (is || []).map(function (i) {
      var f = D.chaos.faults[i];
      return '<h3>chaos fault ' + (i + 1) + ': ' + esc(f.kind) + ' <span class="verdict ' + vcls(f.verdict) + '">' + esc(f.verdict) + '</span></h3>' +
        '<div class="chg">' + esc(f.what) + '\nat ' + esc(f.where) + (f.did ? '\nthe client ' + esc(f.did) : '') + '</div>';
    }).join('');
  }
  function chaos() {
    chaosAt = {}; chaosSt = {};
    var C = D.chaos;
    if (!C) return;
    C.faults.forEach(function (f, i) {
      if (f.session !== S.id) return;
      if (f.at) (chaosAt[f.at] = chaosAt[f.at] || []).push(i);
      else if (f.st >= 0) (chaosSt[f.st] = chaosSt[f.st] || []).push(i);
    });
    var n = {}, injected = 0;
    C.faults.forEach(function (f) { n[f.verdict] = (n[f.verdict] || 0) + 1; if (f.verdict !== 'not reached') injected++; });
    var h = '<h2>Chaos replay, seed ' + esc(C.seed) + ' · kinds ' + esc(C.kinds && C.kinds.length ? C.kinds.join(', ') : 'all') + ' · ' + esc(C.rate) + ' per session: ' +
      injected + ' injected — <span class="verdict v-pass">' + (n.pass || 0) + ' pass</span> <span class="verdict v-fail' + (n.fail ? ' some' : '') + '">' + (n.fail || 0) + ' fail</span> ' +
      '<span class="verdict v-unseen">' + (n['not observed'] || 0) + ' not observed</span> <span class="verdict v-unreached">' + (n['not reached'] || 0) + ' not reached</span></h2>';
    if (C.command) h += '<div class="cmd">replay this run: <code id="chaos-cmd">' + esc(C.command) + '</code></div>';
    h += '<table class="cf"><tr><th>#</th><th>verdict</th><th>session</th><th>kind</th><th>where</th><th>fault</th><th>the client</th></tr>';
    C.faults.forEach(function (f, i) {
      h += '<tr class="cfr ' + vcls(f.verdict) + '" data-i="' + i + '"><td>' + (i + 1) + '</td><td><span class="verdict ' + vcls(f.verdict) + '">' + esc(f.verdict) + '</span></td><td>' + esc(f.session) +
        '</td><td>' + esc(f.kind) + '</td><td>' + esc(f.where) + '</td><td>' + esc(f.what) + '</td><td>' + esc(f.did || '') + '</td></tr>';
    });
    var sec = $('chaos');
    sec.innerHTML = h + '</table>'; sec.hidden = false;
    sec.onclick = function (e) {
      var el = e.target.closest('.cfr');
      if (!el) return;
      var f = C.faults[+el.dataset.i];
      D.sessions.forEach(function (s, k) { if (s.id === f.session && k !== cur) show(k); });
      if (S.id !== f.session) return;
      if (f.at) select(f.at, true);
      else if (f.st >= 0) showStream(f.st);
    };
  }
  function show(i) {
    cur = i; S = D.sessions[i]; sel = null; folded = {};
    var tabs = $('tabs');
    tabs.innerHTML = D.sessions.length < 2 ? '' : D.sessions.map(function (s, k) {
      return '<button data-i="' + k + '" class="' + (k === i ? 'on' : '') + (chaosFails(s.id) ? ' v-fail' : '') + '">session ' + esc(s.id) + (s.name ? ' · ' + esc(s.name) : '') + '</button>';
    }).join('');
    meta();
    diffs();
    chaos();
    build();
    Object.keys(diffAt).forEach(function (seq) { // an answer shows its request's differences too
      var r = bySeq[seq];
      if (r && r.f.ans && !diffAt[r.f.ans]) diffAt[r.f.ans] = diffAt[seq];
    });
    var methods = {};
    S.frames.forEach(function (f) { if (f.m) methods[f.m] = (methods[f.m] || 0) + 1; });
    $('method').innerHTML = '<option value="">all methods</option>' + Object.keys(methods).sort().map(function (m) {
      return '<option value="' + esc(m) + '">' + esc(m) + ' (' + methods[m] + ')</option>';
    }).join('');
    $('stream').innerHTML = '<option value="">all streams</option>' + S.streams.map(function (s, k) {
      return '<option value="' + k + '">' + esc(s.label + (s.method ? ' ' + s.method + ' ' + s.url : '')) + '</option>';
    }).join('');
    detail.innerHTML = '<p class="hint">Click a frame to see its bytes and its JSON. Keys: ↑ ↓ move, / search.</p>';
    list.scrollTop = 0;
    apply();
    overview();
  }
  $('tabs').addEventListener('click', function (e) {
    var b = e.target.closest('button');
    if (b) show(+b.dataset.i);
  });
  window.addEventListener('resize', function () { overview(); render(true); });
  window.addEventListener('hashchange', follow);
  show(0);
  follow();
  document.body.dataset.ready = String(performance.now());
})();
