/* lapse view: the page's script (embedded by cmake/embed.cmake; docs/view.md).
 *
 * It shows two documents the command put in the page: the report model
 * (#lapse-report, what `lapse report --json` prints) and the timelines and Python
 * samples of the run's files (#lapse-view, schema "lapse.view"). Every figure of the
 * Summary is one of the report's, formatted; the Timeline and the Flame tabs draw the
 * records. Nothing is fetched. window.lapseView is the hook the tests read. */
(function () {
  'use strict';

  var hook = window.lapseView = { ready: false, error: null };

  /* ---- decoding the data ---- */

  function decodeBlob(id) {
    var el = document.getElementById(id);
    if (!el) return Promise.reject(new Error('the page holds no ' + id));
    if (el.dataset.encoding === 'json') return Promise.resolve(JSON.parse(el.textContent));
    if (typeof DecompressionStream === 'undefined')
      return Promise.reject(new Error('this browser has no DecompressionStream: write the page with ' +
        '`lapse view --no-compress`'));
    var bin = atob(el.textContent);
    var bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate'));
    return new Response(stream).text().then(JSON.parse);
  }

  /* ---- formatting (as src/render/format.c does) ---- */

  function fmtDuration(ns) {
    if (ns === null || ns === undefined || !(ns >= 0) || !isFinite(ns)) return '-';
    if (ns > 0 && ns < 9.995) return ns.toFixed(2) + 'ns';
    if (ns < 999.5) return ns.toFixed(0) + 'ns';
    if (ns < 999950) return (ns / 1e3).toFixed(1) + 'us';
    if (ns < 999950000) return (ns / 1e6).toFixed(1) + 'ms';
    if (ns < 9.995e9) return (ns / 1e9).toFixed(2) + 's';
    if (ns < 59.95e9) return (ns / 1e9).toFixed(1) + 's';
    var s = Math.round(ns / 1e9);
    if (s < 3600) return Math.floor(s / 60) + 'm ' + (s % 60) + 's';
    if (s < 86400) return Math.floor(s / 3600) + 'h ' + Math.floor(s % 3600 / 60) + 'm';
    return Math.floor(s / 86400) + 'd ' + Math.floor(s % 86400 / 3600) + 'h';
  }
  function fmtCount(v) {
    if (v === null || v === undefined) return '-';
    return String(v).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  }
  function fmtBytes(v) {
    if (v === null || v === undefined) return '-';
    var u = ['B', 'kB', 'MB', 'GB', 'TB'], i = 0, x = Math.abs(v);
    while (x >= 999.95 && i < u.length - 1) { x /= 1000; i++; }
    return (v < 0 ? '-' : '') + (i ? x.toFixed(1) : x.toFixed(0)) + ' ' + u[i];
  }
  function fmtShare(v) {
    if (v === null || v === undefined || !isFinite(v)) return '-';
    return (v * 100).toFixed(1) + '%';
  }
  function fmtNumber(v, digits) {
    if (v === null || v === undefined || !isFinite(v)) return '-';
    if (Math.abs(v) >= 1000) return fmtCount(Math.round(v)); /* 352,586,015 as the text report */
    return Number(v).toFixed(digits === undefined ? 2 : digits);
  }
  function fmtDelta(ns) { /* a signed duration: "+1.2ms", "-3.0us" */
    if (ns === null || ns === undefined || !isFinite(ns)) return '-';
    return (ns < 0 ? '-' : '+') + fmtDuration(Math.abs(ns));
  }
  function fmtRatio(v) {
    if (v === null || v === undefined || !isFinite(v)) return '-';
    return Number(v).toFixed(2) + 'x';
  }
  function fmtFixed3(v) {
    if (v === null || v === undefined || !isFinite(v)) return '-';
    return Number(v).toFixed(3);
  }
  /* a percent of the report (the GPU's): null is n/a (never read), not 0 */
  function fmtPercent(v) { return v === null || v === undefined || !isFinite(v) ? 'n/a' : Number(v).toFixed(1) + '%'; }
  var FORMATS = { ns: fmtDuration, dns: fmtDelta, ratio: fmtRatio, d3: fmtFixed3,
    bool: function (v) { return v ? 'yes' : 'no'; }, count: fmtCount, bytes: fmtBytes, share: fmtShare,
    num: fmtNumber, pct: fmtPercent,
    text: function (v) { return v === null || v === undefined || v === '' ? '-' : String(v); } };

  /* ---- building markup ---- */

  function h(tag, attrs) {
    var el = document.createElement(tag);
    if (attrs) for (var k in attrs) {
      if (attrs[k] === undefined || attrs[k] === null) continue;
      if (k === 'text') el.textContent = attrs[k];
      else if (k === 'class') el.className = attrs[k];
      else el.setAttribute(k, attrs[k]);
    }
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined) continue;
      el.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    }
    return el;
  }

  /* A figure of the report: its JSON pointer and raw value in data attributes (the
   * tests compare them with `lapse report --json`), its text formatted. */
  function fig(ptr, value, kind, estimated) {
    var text = FORMATS[kind](value);
    var cls = kind === 'text' ? 'text' : '';
    if (estimated && text !== '-') { text = '~ ' + text; cls += ' est'; }
    var td = h('td', { class: cls || null, 'data-json': ptr, 'data-kind': kind,
      'data-value': value === null || value === undefined ? 'null' : JSON.stringify(value),
      'data-sort': typeof value === 'number' ? value : (value === null || value === undefined ? '' : String(value)) });
    td.textContent = text;
    return td;
  }
  function cell(text, cls) { return h('td', { class: cls || 'text', 'data-sort': text, text: text }); }

  /* A sortable table: cols [{label, text?}], rows: arrays of <td>. */
  function table(cols, rows, cls) {
    var head = h('tr');
    cols.forEach(function (c, i) {
      var th = h('th', { class: c.text ? 'text' : null, text: c.label });
      th.addEventListener('click', function () { sortBy(tbl, i, th); });
      head.appendChild(th);
    });
    var body = h('tbody');
    rows.forEach(function (r) {
      var tr = h('tr', { class: r.cls || null });
      (r.cells || r).forEach(function (td) { tr.appendChild(td); });
      body.appendChild(tr);
    });
    var tbl = h('table', { class: cls || null }, h('thead', null, head), body);
    return tbl;
  }
  function sortBy(tbl, col, th) {
    var desc = !th.classList.contains('sorted-desc');
    tbl.querySelectorAll('th').forEach(function (x) { x.classList.remove('sorted-asc', 'sorted-desc'); });
    th.classList.add(desc ? 'sorted-desc' : 'sorted-asc');
    var body = tbl.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[col] ? a.cells[col].dataset.sort : '', y = b.cells[col] ? b.cells[col].dataset.sort : '';
      var nx = x === '' ? NaN : Number(x), ny = y === '' ? NaN : Number(y);
      var r;
      if (!isNaN(nx) && !isNaN(ny)) r = nx - ny;
      else if (isNaN(nx) !== isNaN(ny)) r = isNaN(nx) ? -1 : 1; /* missing sorts low */
      else r = String(x).localeCompare(String(y));
      return desc ? -r : r;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }

  /* ---- Summary ---- */

  function summary(rep) {
    var root = h('section', { class: 'tab', id: 'tab-summary' });
    var run = rep.run;
    var roles = Object.keys(run.roles || {}).map(function (k) { return k + ' x' + run.roles[k]; }).join(', ');
    root.appendChild(h('h2', { text: 'Run ' + (run.id || run.input) }));
    var facts = h('dl', { class: 'facts' });
    function fact(label, td) { facts.appendChild(h('dt', { text: label })); var dd = h('dd'); dd.appendChild(td); facts.appendChild(dd); }
    function figSpan(ptr, v, kind) { var td = fig(ptr, v, kind); var s = h('span', { 'data-json': ptr, 'data-kind': kind, 'data-value': td.dataset.value, text: td.textContent }); return s; }
    fact('Runtime', figSpan('/run/runtime_ns', run.runtime_ns, 'ns'));
    fact('Processes', figSpan('/run/processes', run.processes, 'count'));
    fact('Final', figSpan('/run/final_processes', run.final_processes, 'count'));
    fact('Roles', h('span', { text: roles || '-' }));
    fact('Hosts', h('span', { text: (run.hosts || []).join(', ') + ' (' + (run.hosts || []).length + ')' }));
    fact('Started', h('span', { text: run.start_real_ns ? new Date(run.start_real_ns / 1e6).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC') : '-' }));
    fact('Dir', h('span', { text: run.dir }));
    root.appendChild(facts);

    /* the four numbers, per role and per process */
    var urows = [];
    function usageRow(label, ptr, u, cls) {
      u = u || {};
      return { cls: cls, cells: [cell(label), fig(ptr + '/wall_ns', u.wall_ns, 'ns'), fig(ptr + '/cpu_ns', u.cpu_ns, 'ns'),
        fig(ptr + '/cores_busy', u.cores_busy, 'num'), fig(ptr + '/cpu_user_ns', u.cpu_user_ns, 'ns'),
        fig(ptr + '/cpu_sys_ns', u.cpu_sys_ns, 'ns'), fig(ptr + '/ctx_voluntary', u.ctx_voluntary, 'count'),
        fig(ptr + '/ctx_involuntary', u.ctx_involuntary, 'count')] };
    }
    (rep.roles || []).forEach(function (r, ri) {
      urows.push(usageRow(r.role + ' x' + r.processes, '/roles/' + ri + '/usage', r.usage));
      (rep.workers || []).forEach(function (w, wi) {
        if (w.role === r.role) urows.push(usageRow('pid ' + w.pid + (w.rank !== null ? ' rank ' + w.rank : '') + ' on ' + w.host,
          '/workers/' + wi + '/usage', w.usage, 'sub'));
      });
    });
    root.appendChild(h('h3', { text: 'Usage' }));
    root.appendChild(table([{ label: '', text: 1 }, { label: 'wall' }, { label: 'CPU' }, { label: 'cores' },
      { label: 'user' }, { label: 'sys' }, { label: 'ctx vol' }, { label: 'ctx inv' }], urows));
    root.appendChild(h('p', { class: 'note', text: 'cores = CPU / wall, the cores kept busy; - = not measured.' }));

    (rep.roles || []).forEach(function (r, ri) { root.appendChild(roleBlock(r, ri, rep)); });
    root.appendChild(samplesBlock(rep));
    root.appendChild(causalityBlock(rep));

    root.appendChild(h('h2', { text: 'CAVEATS' }));
    if (!rep.caveats || !rep.caveats.length) root.appendChild(h('p', { id: 'caveats', class: 'none', text: 'CAVEATS none: every file was read, complete.' }));
    else {
      var ul = h('ul', { class: 'caveats', id: 'caveats' });
      rep.caveats.forEach(function (c, i) { ul.appendChild(h('li', { 'data-json': '/caveats/' + i + '/message', 'data-kind': 'text', 'data-value': JSON.stringify(c.message), text: c.message })); });
      root.appendChild(ul);
    }
    return root;
  }

  function phaseIndex(r) {
    var ix = {};
    (r.phases || []).forEach(function (p, i) { ix[p.path] = i; });
    return ix;
  }

  function roleBlock(r, ri, rep) {
    var P = '/roles/' + ri;
    var sec = h('section', { class: 'role', 'data-role': r.role });
    sec.appendChild(h('h2', null, r.role.toUpperCase() + '  (' + r.processes + ' process' + (r.processes === 1 ? '' : 'es') + ', imbalance ',
      h('span', { 'data-json': P + '/imbalance', 'data-kind': 'num', 'data-value': JSON.stringify(r.imbalance), text: fmtNumber(r.imbalance) }), ')'));
    var ix = phaseIndex(r);
    var top = [];
    (r.phases || []).forEach(function (p, i) {
      if (p.depth === 1) top.push({ cells: [cell(p.path), fig(P + '/phases/' + i + '/share_of_busy', p.share_of_busy, 'share', p.estimated),
        fig(P + '/phases/' + i + '/total_ns', p.total_ns, 'ns', p.estimated)] });
    });
    if (r.spans_state !== 'measured') {
      sec.appendChild(h('p', { class: 'note', text: r.spans_state === 'none_measured' ? 'spans collected, none recorded' : 'no spans collected' }));
    } else {
      sec.appendChild(h('h3', null, 'share of ' + r.role + ' busy time (sum of top-level spans, ' + r.processes + ' processes): ',
        h('span', { 'data-json': P + '/busy_ns', 'data-kind': 'ns', 'data-value': JSON.stringify(r.busy_ns), text: fmtDuration(r.busy_ns) })));
      sec.appendChild(table([{ label: 'span', text: 1 }, { label: 'share' }, { label: 'total' }], top, 'top-level'));

      var rows = [], crow = [];
      (r.dominant || []).forEach(function (path) {
        var i = ix[path], p = r.phases[i], Q = P + '/phases/' + i;
        rows.push({ cells: [cell(path), fig(Q + '/calls', p.calls, 'count'), fig(Q + '/self_ns', p.self_ns, 'ns', p.self_estimated),
          fig(Q + '/in_processes', p.in_processes, 'count'), fig(Q + '/p50_ns', p.p50_ns, 'ns', p.estimated),
          fig(Q + '/p99_ns', p.p99_ns, 'ns', p.estimated), fig(Q + '/wait_share', p.wait_share, 'share', true),
          fig(Q + '/ticks', p.ticks, 'count')] });
        (p.counters || []).forEach(function (c, k) {
          var C = Q + '/counters/' + k;
          crow.push({ cells: [cell(path), cell(c.name), fig(C + '/sum', c.sum, 'count'), fig(C + '/per_second', c.per_second, 'num'),
            fig(C + '/ns_per_unit', c.ns_per_unit, 'ns'), fig(C + '/updates', c.updates, 'count')] });
        });
      });
      sec.appendChild(h('h3', { text: 'DOMINANT PHASES by self time' }));
      sec.appendChild(table([{ label: 'path', text: 1 }, { label: 'calls' }, { label: 'self' }, { label: 'procs' },
        { label: 'p50' }, { label: 'p99' }, { label: 'wait' }, { label: 'ticks' }], rows, 'dominant'));
      sec.appendChild(h('p', { class: 'note', text: 'self = total minus child spans; p50, p99 = wall time per call (merged histogram); ' +
        'procs = processes that completed a call; wait = share of the sampled instants at which the thread was off CPU, an estimate (~); - = too few ticks.' }));
      if (crow.length) {
        sec.appendChild(h('h3', { text: 'COUNTERS' }));
        sec.appendChild(table([{ label: 'path', text: 1 }, { label: 'counter', text: 1 }, { label: 'total' }, { label: 'per second' },
          { label: 'time per unit' }, { label: 'updates' }], crow, 'counters'));
      }
      if (r.loop) {
        var L = P + '/loop';
        sec.appendChild(h('h3', { text: 'MOST-CALLED LOOP' }));
        sec.appendChild(table([{ label: 'path', text: 1 }, { label: 'calls' }, { label: 'mean' }, { label: 'p50' }, { label: 'p95' }, { label: 'p99' }],
          [[cell(r.loop.path), fig(L + '/calls', r.loop.calls, 'count'), fig(L + '/mean_ns', r.loop.mean_ns, 'ns'),
            fig(L + '/p50_ns', r.loop.p50_ns, 'ns'), fig(L + '/p95_ns', r.loop.p95_ns, 'ns'), fig(L + '/p99_ns', r.loop.p99_ns, 'ns')]], 'loop'));
      }
      var ranked = (r.phases || []).map(function (p, i) { return [p, i]; }).filter(function (x) { return x[0].across_ranks; });
      if (ranked.length) {
        sec.appendChild(h('h3', { text: 'ACROSS RANKS' }));
        sec.appendChild(table([{ label: 'path', text: 1 }, { label: 'ranks' }, { label: 'entered' }, { label: 'min' }, { label: 'median' }, { label: 'max' }, { label: 'slowest rank' }],
          ranked.map(function (x) {
            var A = P + '/phases/' + x[1] + '/across_ranks', a = x[0].across_ranks;
            return [cell(x[0].path), fig(A + '/ranks', a.ranks, 'count'), fig(A + '/entered', a.entered, 'count'), fig(A + '/min_ns', a.min_ns, 'ns'),
              fig(A + '/median_ns', a.median_ns, 'ns'), fig(A + '/max_ns', a.max_ns, 'ns'), fig(A + '/slowest_rank', a.slowest_rank, 'count')];
          }), 'ranks'));
      }
    }
    if (r.io_state === 'measured' && r.io) {
      var I = P + '/io', io = r.io;
      sec.appendChild(h('h3', { text: 'I/O (process sampler, ' + io.processes + ' processes)' }));
      sec.appendChild(table([{ label: '', text: 1 }, { label: 'all calls' }, { label: 'disk' }, { label: 'page cache' }], [
        [cell('read'), fig(I + '/read_chars', io.read_chars, 'bytes'), fig(I + '/read_bytes', io.read_bytes, 'bytes'), fig(I + '/read_cache_bytes', io.read_cache_bytes, 'bytes')],
        [cell('written'), fig(I + '/write_chars', io.write_chars, 'bytes'), fig(I + '/write_bytes', io.write_bytes, 'bytes'), cell('')]], 'io'));
      sec.appendChild(table([{ label: 'bytes moved', text: 1 }, { label: 'share' }], [
        [cell('while no phase was open'), fig(I + '/share_no_phase_open', io.share_no_phase_open, 'share')],
        [cell('with a phase open throughout'), fig(I + '/share_phase_open', io.share_phase_open, 'share')]], 'io-shares'));
    } else if (r.io_state === 'none_measured') {
      sec.appendChild(h('p', { class: 'note', text: 'I/O: sampled, no byte moved' }));
    }
    if (r.memory_state === 'measured' && r.memory) {
      var M = P + '/memory', mem = r.memory;
      sec.appendChild(h('h3', { text: 'MEMORY' }));
      var mrows = [[cell('peak RSS per process (getrusage)'), fig(M + '/peak_rss_getrusage_bytes', mem.peak_rss_getrusage_bytes, 'bytes'), fig(M + '/peak_rss_getrusage_pid', mem.peak_rss_getrusage_pid, 'count')]];
      if (mem.peak_rss_sampled_bytes !== undefined)
        mrows.push([cell('peak RSS sampled'), fig(M + '/peak_rss_sampled_bytes', mem.peak_rss_sampled_bytes, 'bytes'), cell('')]);
      sec.appendChild(table([{ label: '', text: 1 }, { label: 'bytes' }, { label: 'pid' }], mrows, 'memory'));
    }
    if (r.gpu_state === 'measured' && r.gpu && r.gpu.length) {
      sec.appendChild(h('h3', { text: 'GPU (NVML: busy = the whole device; this run = this process)' }));
      var prow = [];
      /* a torch line joined by uuid is on its device's NVML line (vram_line) */
      sec.appendChild(table([{ label: 'device', text: 1 }, { label: 'uuid', text: 1 }, { label: 'pid' }, { label: 'busy' }, { label: 'idle' }, { label: 'this run' },
        { label: 'VRAM held peak' }, { label: 'readings' }, { label: 'torch', text: 1 }, { label: 'VRAM allocated (peak)' }, { label: 'VRAM reserved (peak)' }],
        r.gpu.map(function (g, gi) {
          var G = P + '/gpu/' + gi;
          (g.by_phase || []).forEach(function (ph, k) {
            var B = G + '/by_phase/' + k;
            prow.push([cell(ph.phase === null ? '(other phases)' : ph.phase), cell(g.device_name), fig(B + '/this_run_pct', ph.this_run_pct, 'pct'),
              fig(B + '/readings', ph.readings, 'count')]);
          });
          return [cell(g.device_name), cell(g.uuid || ('unknown' + (g.uuid_error ? ': ' + g.uuid_error : ''))), fig(G + '/pid', g.pid, 'count'),
            fig(G + '/busy_pct', g.busy_pct, 'pct'), fig(G + '/idle_pct', g.idle_pct, 'pct'),
            fig(G + '/this_run_pct', g.this_run_pct, 'pct'), fig(G + '/vram_held_peak_bytes', g.vram_held_peak_bytes, 'bytes'),
            fig(G + '/readings', g.readings, 'count'), cell(g.vram_line === null || g.vram_line === undefined ? '-' : 'cuda:' + g.torch_index + ' (joined by uuid)'),
            fig(G + '/vram_allocated_peak_bytes', g.vram_allocated_peak_bytes, 'bytes'),
            fig(G + '/vram_reserved_peak_bytes', g.vram_reserved_peak_bytes, 'bytes')];
        }), 'gpu'));
      if (prow.length) {
        sec.appendChild(h('h3', { text: 'GPU BY PHASE (this run, while each top-level span was open)' }));
        sec.appendChild(table([{ label: 'phase', text: 1 }, { label: 'device', text: 1 }, { label: 'this run' }, { label: 'readings' }], prow, 'gpu-phases'));
      }
    }
    if (r.vram_state && r.vram_state !== 'not_collected') {
      /* VRAM from torch not joined to an NVML line: NVML's figures '-' (unknown) */
      var NOT_JOINED = { no_torch_uuid: 'torch gave no uuid', no_nvml: 'no NVML reading on its host',
        no_match: 'no NVML device of its host has its uuid', nvml_uuid_unknown: 'an NVML device of its host has no uuid' };
      var vrows = [];
      r.vram.forEach(function (v, vi) {
        if (v.join === 'uuid') return;
        var V = P + '/vram/' + vi;
        vrows.push([cell('cuda:' + v.torch_index + ' ' + v.device_name), cell(v.uuid || '-'), fig(V + '/pid', v.pid, 'count'),
          fig(V + '/processes', v.processes, 'count'), cell('-'), cell('-'), cell('-'), cell('-'), /* NVML's: unknown */
          fig(V + '/allocated_peak_bytes', v.allocated_peak_bytes, 'bytes'), fig(V + '/reserved_peak_bytes', v.reserved_peak_bytes, 'bytes'),
          cell((NOT_JOINED[v.join] || v.join) + (v.join_why ? ' (' + v.join_why + ')' : ''))]);
      });
      if (vrows.length || !r.vram.length)
        sec.appendChild(h('h3', { text: 'VRAM from torch (per device the largest process peak; not joined to an NVML line)' }));
      if (vrows.length)
        sec.appendChild(table([{ label: 'device', text: 1 }, { label: 'uuid', text: 1 }, { label: 'pid' }, { label: 'processes' },
          { label: 'busy' }, { label: 'idle' }, { label: 'this run' }, { label: 'VRAM held peak' },
          { label: 'VRAM allocated (peak)' }, { label: 'VRAM reserved (peak)' }, { label: 'not joined', text: 1 }], vrows, 'vram'));
      if (r.vram_resets)
        sec.appendChild(h('p', { class: 'note', text: "torch's peak stats were reset (seen at " + r.vram_resets + ' readings): a peak reset before lapse read it is missed' }));
      if (r.vram_error)
        sec.appendChild(h('p', { class: 'note', text: 'a reading failed: ' + r.vram_error }));
    }
    return sec;
  }

  function samplesBlock(rep) {
    var sec = h('section', { class: 'samples' });
    if (!rep.python_samples || !rep.python_samples.length) return sec;
    sec.appendChild(h('h2', { text: 'PYTHON SAMPLES (estimates)' }));
    rep.python_samples.forEach(function (s, si) {
      var S = '/python_samples/' + si;
      sec.appendChild(h('h3', { text: s.file + ': mode ' + s.mode }));
      sec.appendChild(table([{ label: 'samples' }, { label: 'rate asked' }, { label: 'rate achieved' }, { label: 'late' }, { label: 'read errors' }],
        [[fig(S + '/samples', s.samples, 'count'), fig(S + '/rate_asked_hz', s.rate_asked_hz, 'num'), fig(S + '/rate_achieved_hz', s.rate_achieved_hz, 'num'),
          fig(S + '/late_samples', s.late_samples, 'count'), fig(S + '/read_errors', s.read_errors, 'count')]], 'sampling'));
      (s.processes || []).forEach(function (p, pi) {
        var fns = p.top_self || [];
        if (!fns.length) return;
        var F = S + '/processes/' + pi + '/top_self/';
        sec.appendChild(table([{ label: 'function by self time (pid ' + p.pid + ')', text: 1 }, { label: 'self' }, { label: 'total' }, { label: 'self time' }],
          fns.map(function (f, fi) {
            return [cell(f.function), fig(F + fi + '/self_share', f.self_share, 'share', true), fig(F + fi + '/total_share', f.total_share, 'share', true),
              fig(F + fi + '/self_ns', f.self_ns, 'ns', true)];
          }), 'functions'));
      });
    });
    return sec;
  }

  /* CAUSALITY: the pairs' counts and the phases on the critical path (the report's). */
  function causalityBlock(rep) {
    var sec = h('section', { class: 'causality', id: 'causality' });
    var c = rep.causality;
    if (!c) return sec;
    var C = '/causality';
    sec.appendChild(h('h2', { text: 'CAUSALITY' }));
    sec.appendChild(table([{ label: 'signals' }, { label: 'waits' }, { label: 'pairs' }, { label: 'blocking' },
      { label: 'waits unmatched' }, { label: 'signals not waited for' }, { label: 'not recorded' }],
      [[fig(C + '/signals', c.signals, 'count'), fig(C + '/waits', c.waits, 'count'), h('td', { 'data-sort': c.pairs.length, text: fmtCount(c.pairs.length) }),
        fig(C + '/blocking_pairs', c.blocking_pairs, 'count'), fig(C + '/unmatched_waits', c.unmatched_waits, 'count'),
        fig(C + '/unconsumed_signals', c.unconsumed_signals, 'count'), fig(C + '/dropped', c.dropped, 'count')]], 'causal-counts'));
    var cp = c.critical_path;
    if (!cp) return sec;
    var P = C + '/critical_path';
    sec.appendChild(h('h3', null, 'CRITICAL PATH ',
      h('span', { 'data-json': P + '/length_ns', 'data-kind': 'ns', 'data-value': JSON.stringify(cp.length_ns), text: fmtDuration(cp.length_ns) }),
      ' through ', h('span', { 'data-json': P + '/processes', 'data-kind': 'count', 'data-value': JSON.stringify(cp.processes), text: fmtCount(cp.processes) }),
      ' process' + (cp.processes === 1 ? '' : 'es') + ', ' + fmtCount(cp.segments.length - 1) + ' hand-offs; wake-ups ',
      h('span', { 'data-json': P + '/wake_ns', 'data-kind': 'ns', 'data-value': JSON.stringify(cp.wake_ns), text: fmtDuration(cp.wake_ns) })));
    sec.appendChild(table([{ label: 'role', text: 1 }, { label: 'phase on the path', text: 1 }, { label: 'time' }, { label: 'share' }],
      cp.phases.map(function (p, i) {
        var Q = P + '/phases/' + i;
        return [cell(p.role), cell(p.path), fig(Q + '/ns', p.ns, 'ns'), fig(Q + '/share', p.share, 'share')];
      }), 'critical'));
    sec.appendChild(h('p', { class: 'note', text: 'The chain of work and hand-offs (a signal, then the end of the wait it ended) that set the end of the run: ' +
      'its time on each thread is given to the innermost span open there. The Timeline draws it (red) and the hand-offs (arrows).' +
      (cp.spans_dropped ? ' A process on the path dropped spans: time there may read as (no span).' : '') }));
    return sec;
  }

  /* ---- Timeline ---- */

  var ROW = 16, HEAD = 18;
  /* GPU records by kind (store_gpu_kind): their words and colours */
  var GPU_KINDS = { 1: 'kernel', 2: 'memcpy', 3: 'memset' };
  var GPU_COLORS = { 1: function (name) { return 'hsl(' + (95 + hue(name) % 60) + ',45%,58%)'; },
    2: function () { return '#6f9be8'; }, 3: function () { return '#b58ad8'; } };
  function gpuName(lane, k) { /* its name; a copy's or a set's with its bytes */
    var tr = lane.track, name = lane.names[tr.name[k]];
    return tr.kind[k] === 1 ? name : name + ' ' + fmtBytes(tr.bytes[k]);
  }

  function hue(s) {
    var x = 2166136261;
    for (var i = 0; i < s.length; i++) { x ^= s.charCodeAt(i); x = Math.imul(x, 16777619); }
    return (x >>> 0) % 360;
  }

  /* The lanes: host, then process (by rank, then pid), then thread; each thread's
   * spans as per-level columns sorted by start (within a level they never overlap,
   * so their ends are sorted too). */
  function buildLanes(view, rep) {
    var procs = view.processes.slice();
    procs.sort(function (a, b) {
      if (a.host !== b.host) return a.host < b.host ? -1 : 1;
      var ra = a.rank === null ? Infinity : a.rank, rb = b.rank === null ? Infinity : b.rank;
      if (ra !== rb) return ra - rb;
      return a.pid - b.pid;
    });
    var lanes = [], y = 0, host = null, tmin = Infinity, tmax = -Infinity, cmin = Infinity, cmax = -Infinity;
    var stats = {}, bands = [];
    (rep.roles || []).forEach(function (r) { stats[r.role] = { role: r, ix: phaseIndex(r) }; });
    procs.forEach(function (p) {
      if (p.host !== host) { host = p.host; lanes.push({ kind: 'host', y: y, h: HEAD, label: 'host ' + host }); y += HEAD; }
      var pli = lanes.length;
      var plane = { kind: 'process', y: y, h: HEAD, proc: p,
        label: p.role + ' pid ' + p.pid + (p.rank !== null ? ' rank ' + p.rank : ''),
        caveats: caveatsOf(rep.caveats, p) };
      lanes.push(plane); y += HEAD;
      var gpuY0 = null;
      var pmin = Infinity, pmax = -Infinity;
      /* a sampled thread's merged flame chart (the file's Python samples, laid out
       * by lapse: analyze/sample_chart.c), under that thread's lane */
      var charts = p.charts || [], placed = [], names = null;
      function addChart(c) {
        if (!names) {
          var s = p.samples, fr = s.frames;
          names = [];
          for (var f = 0; 3 * f < fr.length; f++) {
            var file = s.strings[fr[3 * f + 1]];
            names.push(s.strings[fr[3 * f]] + (file ? ' (' + file + ')' : ''));
          }
        }
        var counts = [], maxDepth = -1, n = c.begin.length, at = 0;
        for (var i = 0; i < n; i++) { var d = c.depth[i]; counts[d] = (counts[d] || 0) + 1; if (d > maxDepth) maxDepth = d; }
        var levels = [];
        for (var l = 0; l <= maxDepth; l++) {
          var k = counts[l] || 0;
          levels.push({ start: new Float64Array(k), end: new Float64Array(k), path: new Uint32Array(k), n: 0, match: null });
        }
        for (var q = 0; q < n; q++) {
          at += c.begin[q];
          var L = levels[c.depth[q]], j = L.n++;
          L.start[j] = at; L.end[j] = at + c.dur[q]; L.path[j] = c.frame[q];
          if (at < cmin) cmin = at; /* the range is the spans' unless there are none */
          if (at + c.dur[q] > cmax) cmax = at + c.dur[q];
        }
        levels.forEach(function (lv) { lv.reach = lv.end; });
        var tn = p.samples.strings[c.thread_name] || 'thread';
        lanes.push({ kind: 'samples', y: y, h: Math.max(levels.length, 1) * ROW, proc: p, chart: c, levels: levels,
          names: names, label: 'python ' + tn + ' ' + c.tid + (c.pid !== p.pid ? ' (pid ' + c.pid + ')' : '') + ', merged' });
        y += Math.max(levels.length, 1) * ROW;
      }
      p.threads.forEach(function (t) {
        var n = t.begin.length, levels = [], at = 0, maxLevel = -1;
        var counts = [];
        for (var i = 0; i < n; i++) { var l = t.level[i]; counts[l] = (counts[l] || 0) + 1; if (l > maxLevel) maxLevel = l; }
        for (var l2 = 0; l2 <= maxLevel; l2++) {
          var c = counts[l2] || 0;
          levels.push({ start: new Float64Array(c), end: new Float64Array(c), path: new Uint32Array(c), n: 0, match: null });
        }
        var pos = new Uint32Array(n); /* each span's index in its level (a launch arrow's bar) */
        for (var k = 0; k < n; k++) {
          at += t.begin[k];
          var L = levels[t.level[k]], j = L.n++;
          L.start[j] = at; L.end[j] = at + t.dur[k]; L.path[j] = t.path[k]; pos[k] = j;
          if (at < pmin) pmin = at;
          if (at + t.dur[k] > pmax) pmax = at + t.dur[k];
        }
        var rows = Math.max(levels.length, 1);
        levels.forEach(function (lv) { lv.reach = lv.end; }); /* ends sorted within a level */
        lanes.push({ kind: 'thread', y: y, h: rows * ROW, proc: p, thread: t, levels: levels, spans: n, pos: pos,
          label: (t.name || 'thread') + ' ' + t.tid, stats: stats[p.role] });
        y += rows * ROW;
        charts.forEach(function (c, ci) { if (!placed[ci] && c.pid === p.pid && c.tid === t.tid) { placed[ci] = 1; addChart(c); } });
      });
      charts.forEach(function (c, ci) { if (!placed[ci]) addChart(c); }); /* threads with samples, no spans */
      /* the GPU tracks (analyze/gpu_track.c): per device and stream its kernels, copies
       * and sets at their device time, in the rows lapse laid them in */
      ((p.gpu && p.gpu.tracks) || []).forEach(function (tr) {
        var n = tr.begin.length, counts = [], at = 0, rows = Math.max(tr.rows, 1), levels = [];
        for (var i = 0; i < n; i++) counts[tr.row[i]] = (counts[tr.row[i]] || 0) + 1;
        for (var r = 0; r < rows; r++) {
          var c = counts[r] || 0;
          levels.push({ start: new Float64Array(c), end: new Float64Array(c), reach: new Float64Array(c), path: new Uint32Array(c),
            op: new Uint32Array(c), n: 0, match: null });
        }
        for (var k = 0; k < n; k++) {
          at += tr.begin[k];
          var L = levels[tr.row[k]], j = L.n++;
          L.start[j] = at; L.end[j] = at + tr.dur[k]; L.path[j] = tr.name[k]; L.op[j] = k;
          L.reach[j] = j ? Math.max(L.reach[j - 1], L.end[j]) : L.end[j]; /* a row that ran out of rows may overlap */
          if (at < pmin) pmin = at;
          if (at + tr.dur[k] > pmax) pmax = at + tr.dur[k];
        }
        if (gpuY0 === null) gpuY0 = y;
        lanes.push({ kind: 'gpu', y: y, h: rows * ROW, proc: p, track: tr, levels: levels, names: p.gpu.names,
          label: 'GPU ' + tr.device + ' \u00b7 stream ' + tr.stream + (tr.more ? ' and ' + tr.more + ' more' : '') });
        y += rows * ROW;
      });
      /* the process sampler's RSS and I/O over time (analyze/proc_track.h): a line
       * track each, every record one value over its interval */
      var pr = p.proc;
      if (pr) {
        var n = pr.begin.length, t0s = new Float64Array(n), t1s = new Float64Array(n), at = 0;
        for (var q = 0; q < n; q++) { at += pr.begin[q]; t0s[q] = at; t1s[q] = at + pr.dur[q]; }
        if (n) { cmin = Math.min(cmin, t0s[0]); cmax = Math.max(cmax, t1s[n - 1]); } /* as the charts' */
        var TRACK = 2 * ROW;
        if (pr.rss) {
          lanes.push({ kind: 'track', track: 'rss', y: y, h: TRACK, proc: p, t0: t0s, t1: t1s, n: n, peak: pr.rss_peak,
            series: [{ name: 'RSS', values: pr.rss, color: '#2760a8' }], fmt: fmtBytes,
            label: 'RSS (max per record)' });
          y += TRACK;
        }
        if (pr.io) {
          lanes.push({ kind: 'track', track: 'io', y: y, h: TRACK, proc: p, t0: t0s, t1: t1s, n: n, peak: pr.io_peak,
            series: [{ name: 'read', values: pr.read_per_s, color: '#2e7d32' }, { name: 'written', values: pr.write_per_s, color: '#c25e00' }],
            fmt: function (v) { return fmtBytes(v) + '/s'; }, label: 'I/O (bytes/s of calls)' });
          y += TRACK;
        }
      }
      if (p.dropped && p.dropped_at_ns !== null) { pmax = Math.max(pmax, p.dropped_at_ns); pmin = Math.min(pmin, p.dropped_at_ns); }
      /* the report's backend windows and ACTIVITY pauses of this process: bands */
      processBands(rep, p, pli, plane, y, gpuY0 === null ? null : [gpuY0, y - gpuY0]).forEach(function (b) {
        bands.push(b);
        pmin = Math.min(pmin, b.t0);
        if (b.t1 !== null) pmax = Math.max(pmax, b.t1);
      });
      if (pmin < tmin) tmin = pmin;
      if (pmax > tmax) tmax = pmax;
    });
    if (!isFinite(tmin) && isFinite(cmin)) { tmin = cmin; tmax = cmax; }
    if (!isFinite(tmin)) { tmin = 0; tmax = 1; }
    if (tmax <= tmin) tmax = tmin + 1;
    return { lanes: lanes, height: y, t0: tmin, t1: tmax, bands: bands };
  }

  /* The report's caveats about process p (those naming its pid and host): indices. */
  function caveatsOf(caveats, p) {
    var out = [];
    (caveats || []).forEach(function (c, i) { if (c.pid === p.pid && c.host === p.host) out.push(i); });
    return out;
  }

  /* Process p's bands, from the report's figures (run clock, as the timelines'): its
   * backend window (backend_windows: open to close, over all its lanes) and its
   * ACTIVITY pauses (caveat activity_paused, over its GPU tracks, else its own lane).
   * The file keeps only the pauses' first start, last end, count and total, so several
   * pauses are one band from the first start to the last end. t1 null: still open (or
   * paused) when its file was written: the band runs to the right edge. */
  function processBands(rep, p, li, plane, yEnd, gpu) {
    var out = [];
    (rep.backend_windows || []).forEach(function (w, i) {
      if (w.pid !== p.pid || w.host !== p.host || w.open_at_ns === null) return;
      out.push({ kind: 'window', json: '/backend_windows/' + i, lane: li, y: plane.y, h: yEnd - plane.y,
        t0: w.open_at_ns, t1: w.close_at_ns,
        label: w.backend + ' window: entries ' + w.first_entry + '..' + w.last_entry + ' of ' + w.phase +
          (w.state === 'cut' ? ' (the session stopped inside it)' : w.state === 'open' ? ' so far (still open when its file was written)' : ''),
        more: 'Open from ' + fmtDuration(w.open_at_ns) + (w.close_at_ns === null ? '' : ' to ' + fmtDuration(w.close_at_ns)) +
          ' after the run\'s start; ' + (w.trace ? 'trace ' + w.trace : 'no trace') });
    });
    (rep.caveats || []).forEach(function (c, i) {
      if (c.kind !== 'activity_paused' || c.pid !== p.pid || c.host !== p.host) return;
      out.push({ kind: 'paused', json: '/caveats/' + i, lane: li, y: gpu ? gpu[0] : plane.y, h: gpu ? gpu[1] : plane.h,
        t0: c.from_ns, t1: c.to_ns,
        label: 'ACTIVITY paused (torch.profiler had CUPTI): ' + (c.count === 1 ? 'once, ' : fmtCount(c.count) + ' times, ') +
          fmtDuration(c.paused_ns) + ' in all',
        more: (c.count === 1 ? 'From its start to its end' : 'From the first pause\'s start to the last one\'s end (the file keeps ' +
          'no other pause\'s times)') + (c.to_ns === null ? ', still paused when its file was written' : '') +
          ': the GPU records of the paused time are in torch\'s trace, not here; this is not an idle GPU.' });
    });
    return out;
  }

  function lowerBoundEnd(end, n, t) { /* first i with end[i] > t */
    return lowerBoundFrom(end, 0, n, t);
  }
  function lowerBoundFrom(end, lo, n, t) { /* first i >= lo with end[i] > t (ends sorted) */
    var step = 1, hi = lo;
    while (hi < n && end[hi] <= t) { lo = hi + 1; hi += step; step *= 2; } /* galloping: a pixel holds few */
    if (hi > n) hi = n;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (end[mid] > t) hi = mid; else lo = mid + 1; }
    return lo;
  }

  function timeline(view, rep) {
    var root = h('section', { class: 'tab', id: 'tab-timeline', hidden: '' });
    var search = h('input', { type: 'search', id: 'tl-search', placeholder: 'search spans (name or path)' });
    var info = h('span', { class: 'muted', id: 'tl-info' });
    var reset = h('button', { type: 'button', text: 'Reset zoom' });
    var causalBox = null;
    if (rep.causality) {
      causalBox = h('input', { type: 'checkbox', id: 'tl-causal', checked: '' });
      causalBox.addEventListener('change', function () { st.causal = causalBox.checked; redraw(); });
    }
    root.appendChild(h('div', { id: 'tl-bar' }, search, reset,
      causalBox ? h('label', null, causalBox, ' hand-offs and critical path') : null, info));
    var canvas = h('canvas', { id: 'tl-canvas' });
    var wrap = h('div', { id: 'tl-wrap' }, canvas);
    root.appendChild(wrap);
    var detail = h('div', { id: 'tl-detail', class: 'muted', text: 'Wheel: zoom around the pointer. Drag: pan. Click a span for its path\'s figures.' });
    root.appendChild(detail);

    var L = buildLanes(view, rep);
    var LABEL = 170;
    var st = { t0: L.t0, t1: L.t1, query: '', frameMs: 0, width: 0, causal: true, arrows: [], critical: [], arrowsLeftOut: 0,
      selectedGpu: null, launch: null, marks: [], bands: [] };
    var ctx = canvas.getContext('2d');
    var dpr = window.devicePixelRatio || 1;

    /* What this frame drew, for the pointer and the hook: each bar, merged column, track
     * record and dropped band, kept in typed arrays reused from frame to frame (a frame
     * allocates nothing per bar: 262,144 GPU records fill their rows with tens of
     * thousands of columns); barObj(i) gives one as an object. what: 0 a bar, 1 a merged
     * column (count: how many), 2 a track's record, 3 a dropped band (count: spans). */
    var B = { n: 0, cap: 0 };
    var BAR_FIELDS = { x0: Float64Array, x1: Float64Array, y: Float64Array, h: Float64Array, lane: Int32Array,
      level: Int32Array, index: Int32Array, count: Float64Array, hit: Uint8Array, what: Uint8Array };
    function barsGrow() {
      var cap = Math.max(B.cap * 2, 4096);
      Object.keys(BAR_FIELDS).forEach(function (f) {
        var a = new BAR_FIELDS[f](cap);
        if (B[f]) a.set(B[f]);
        B[f] = a;
      });
      B.cap = cap;
    }
    barsGrow();
    function pushBar(what, x0, x1, y, hh, li, level, index, count, hit) {
      if (B.n === B.cap) barsGrow();
      var k = B.n++;
      B.what[k] = what; B.x0[k] = x0; B.x1[k] = x1; B.y[k] = y; B.h[k] = hh; B.lane[k] = li;
      B.level[k] = level; B.index[k] = index; B.count[k] = count; B.hit[k] = hit ? 1 : 0;
    }
    function barObj(k) {
      var li = B.lane[k], lane = L.lanes[li], b = { x0: B.x0[k], x1: B.x1[k], y: B.y[k], h: B.h[k], lane: li };
      var what = B.what[k];
      if (what === 3) { b.dropped = B.count[k]; return b; }
      b.index = B.index[k];
      if (what === 2) { b.track = lane.track; return b; }
      var lv = lane.levels[B.level[k]];
      b.level = B.level[k];
      if (what === 0) {
        b.path = (lane.names || lane.proc.paths)[lv.path[b.index]];
        b.merged = 0; b.hit = !!B.hit[k]; b.gpu = lane.kind === 'gpu' ? lv.op[b.index] : undefined;
      } else {
        b.merged = B.count[k]; b.hit = !!B.hit[k];
      }
      return b;
    }
    /* a bar's colour (its lane's, by path or name: cached per lane) */
    function barColor(lane, lv, i) {
      var c = lane.colors[lv.path[i]];
      if (c !== undefined) return c;
      var path = (lane.names || lane.proc.paths)[lv.path[i]];
      c = lane.kind === 'samples' ? 'hsl(' + (20 + hue(path) % 40) + ',75%,68%)' :
        lane.kind === 'gpu' ? (GPU_COLORS[lane.track.kind[lv.op[i]]] || GPU_COLORS[1])(path) : 'hsl(' + hue(path) + ',55%,70%)';
      return (lane.colors[lv.path[i]] = c);
    }
    L.lanes.forEach(function (l) { l.colors = []; });

    function size() {
      var w = Math.max(wrap.clientWidth - 2, 300);
      st.width = w;
      canvas.width = Math.round(w * dpr); canvas.height = Math.round(Math.max(L.height, 40) * dpr);
      canvas.style.width = w + 'px'; canvas.style.height = Math.max(L.height, 40) + 'px';
    }
    function xOf(t) { return LABEL + (t - st.t0) * (st.width - LABEL) / (st.t1 - st.t0); }
    function tOf(x) { return st.t0 + (x - LABEL) * (st.t1 - st.t0) / (st.width - LABEL); }

    function setQuery(q) {
      st.query = q.toLowerCase();
      L.lanes.forEach(function (lane) {
        if (lane.kind !== 'thread' && lane.kind !== 'samples' && lane.kind !== 'gpu') return;
        var paths = lane.names || lane.proc.paths, hit = new Uint8Array(paths.length), any = false;
        for (var i = 0; i < paths.length; i++) if (st.query && paths[i].toLowerCase().indexOf(st.query) >= 0) { hit[i] = 1; any = true; }
        lane.levels.forEach(function (lv) {
          if (!st.query) { lv.match = null; return; }
          var pre = new Int32Array(lv.n + 1);
          for (var k = 0; k < lv.n; k++) pre[k + 1] = pre[k] + (any ? hit[lv.path[k]] : 0);
          lv.match = pre;
        });
      });
    }

    function draw() {
      var t = performance.now();
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.clearRect(0, 0, st.width, L.height);
      ctx.font = '11px system-ui, sans-serif';
      ctx.textBaseline = 'middle';
      B.n = 0; st.marks = []; st.bands = [];
      var scale = (st.width - LABEL) / (st.t1 - st.t0), searching = !!st.query, t0 = st.t0, t1 = st.t1;
      var top = wrap.scrollTop, bottom = top + wrap.clientHeight;
      L.lanes.forEach(function (lane, li) {
        if (lane.y > bottom || lane.y + lane.h < top) return;
        if (lane.kind === 'track') { drawTrack(lane, li, scale); return; }
        if (lane.kind !== 'thread' && lane.kind !== 'samples' && lane.kind !== 'gpu') {
          ctx.fillStyle = lane.kind === 'host' ? '#e3e8ee' : '#f4f6f8';
          ctx.fillRect(0, lane.y, st.width, lane.h);
          ctx.fillStyle = '#1d232a';
          ctx.fillText(lane.label, 4, lane.y + lane.h / 2);
          if (lane.caveats && lane.caveats.length) drawMark(lane, li);
          var p = lane.proc;
          if (lane.kind === 'process' && p.dropped) {
            var xd = Math.max(xOf(p.dropped_at_ns), LABEL);
            ctx.fillStyle = 'rgba(179,38,30,.18)';
            ctx.fillRect(xd, lane.y, st.width - xd, lane.h);
            ctx.fillStyle = '#b3261e';
            ctx.fillRect(xd, lane.y, 2, lane.h);
            var msg = fmtCount(p.dropped) + ' spans dropped here (timeline full, max_spans ' + fmtCount(p.max_spans) + ')';
            ctx.fillText(msg, Math.min(xd + 5, st.width - 300), lane.y + lane.h / 2);
            pushBar(3, xd, st.width, lane.y, lane.h, li, 0, 0, p.dropped, 0);
          }
          return;
        }
        ctx.fillStyle = '#66707a';
        ctx.fillText(lane.label, 10, lane.y + ROW / 2);
        ctx.save();
        ctx.beginPath(); ctx.rect(LABEL, lane.y, st.width - LABEL, lane.h); ctx.clip();
        var paths = lane.names || lane.proc.paths, gpu = lane.kind === 'gpu';
        lane.levels.forEach(function (lv, level) {
          var y = lane.y + level * ROW, n = lv.n;
          var i = lowerBoundEnd(lv.reach, n, t0), start = lv.start, end = lv.end;
          var runX0 = 0, runX1 = -1, runStyle = ''; /* adjacent merged columns of one colour: one rectangle */
          var colPx = -Infinity; /* the last merged column's pixel */
          while (i < n && start[i] < t1) {
            var x0 = LABEL + (start[i] - t0) * scale, x1 = LABEL + (end[i] - t0) * scale;
            if (x1 - x0 >= 1) {
              if (runX1 >= 0) { ctx.fillStyle = runStyle; ctx.fillRect(runX0, y + 1, runX1 - runX0, ROW - 2); runX1 = -1; }
              var hit = searching && lv.match[i + 1] - lv.match[i] > 0;
              ctx.fillStyle = searching ? (hit ? '#f2b600' : '#dfe3e7') : barColor(lane, lv, i);
              var bx = Math.max(x0, LABEL - 1), bw = Math.min(x1, st.width + 1) - bx;
              ctx.fillRect(bx, y + 1, bw > 3 ? bw - 1 : bw, ROW - 2); /* a gap between neighbours */
              if (bw > 30) {
                ctx.fillStyle = '#1d232a';
                var path = paths[lv.path[i]];
                var name = lane.kind === 'samples' ? path : gpu ? gpuName(lane, lv.op[i]) : path.slice(path.lastIndexOf('/') + 1);
                ctx.fillText(name.length * 6 > bw - 6 ? name.slice(0, Math.max(1, Math.floor((bw - 6) / 6))) : name, bx + 3, y + ROW / 2);
              }
              pushBar(0, x0, x1, y, ROW, li, level, i, 0, hit);
              i++;
            } else { /* narrower than a pixel: what falls in this pixel is one merged column (a record
                      * that ended past the last column's pixel: the next pixel's) */
              var px = Math.max(Math.floor(x0), colPx + 1), tEnd = t0 + (px + 1 - LABEL) / scale;
              colPx = px;
              var j = lowerBoundFrom(lv.reach, i, n, tEnd);
              if (j <= i) j = i + 1;
              var mhit = searching && lv.match[j] - lv.match[i] > 0;
              var style = searching ? (mhit ? '#f2b600' : '#dfe3e7') : '#8f9aa6';
              if (runX1 === px && runStyle === style) runX1 = px + 1;
              else {
                if (runX1 >= 0) { ctx.fillStyle = runStyle; ctx.fillRect(runX0, y + 1, runX1 - runX0, ROW - 2); }
                runX0 = px; runX1 = px + 1; runStyle = style;
              }
              pushBar(1, px, px + 1, y, ROW, li, level, i, j - i, mhit);
              i = j;
            }
          }
          if (runX1 >= 0) { ctx.fillStyle = runStyle; ctx.fillRect(runX0, y + 1, runX1 - runX0, ROW - 2); }
        });
        ctx.restore();
      });
      drawBands(scale);
      drawCausality(scale);
      drawLaunch(scale);
      ctx.fillStyle = '#d9dde2';
      ctx.fillRect(LABEL - 1, 0, 1, L.height);
      st.frameMs = performance.now() - t;
      info.textContent = fmtDuration(st.t1 - st.t0) + ' shown, from ' + fmtDuration(Math.max(st.t0, 0)) +
        ' · ' + B.n + ' bars' + (st.arrows.length ? ' · ' + st.arrows.length + ' hand-offs' : '') +
        (st.arrowsLeftOut ? ' (' + st.arrowsLeftOut + ' more: zoom in)' : '') + ' · frame ' + st.frameMs.toFixed(1) + ' ms';
    }

    /* A process's caveats: a mark after its lane's label ("! 2"), the caveats' text on
     * hover and click. */
    function drawMark(lane, li) {
      var text = '\u26a0 ' + lane.caveats.length, x0 = 4 + ctx.measureText(lane.label).width + 8;
      var w = ctx.measureText(text).width + 8;
      ctx.fillStyle = '#b3261e';
      ctx.fillRect(x0, lane.y + 2, w, lane.h - 4);
      ctx.fillStyle = '#fff';
      ctx.fillText(text, x0 + 4, lane.y + lane.h / 2);
      st.marks.push({ lane: li, pid: lane.proc.pid, host: lane.proc.host, x0: x0, x1: x0 + w, y: lane.y, h: lane.h,
        caveats: lane.caveats.slice() });
    }
    /* The bands (processBands): a shade over the lanes from t0 to t1 (t1 null: to the
     * right edge), edged, with its label at its left end. */
    var BAND_STYLE = { window: ['rgba(39,96,168,.10)', '#2760a8'], paused: ['rgba(230,140,0,.18)', '#b86e00'] };
    function drawBands(scale) {
      if (!L.bands.length) return;
      ctx.save();
      ctx.beginPath(); ctx.rect(LABEL, 0, st.width - LABEL, L.height); ctx.clip();
      L.bands.forEach(function (b, i) {
        var x0 = LABEL + (b.t0 - st.t0) * scale, x1 = b.t1 === null ? st.width : LABEL + (b.t1 - st.t0) * scale;
        if (x1 < LABEL || x0 > st.width) return;
        var sty = BAND_STYLE[b.kind];
        ctx.fillStyle = sty[0];
        ctx.fillRect(x0, b.y, Math.max(x1 - x0, 1), b.h);
        ctx.fillStyle = sty[1];
        ctx.fillRect(x0, b.y, 1, b.h);
        if (b.t1 !== null) ctx.fillRect(x1 - 1, b.y, 1, b.h);
        var ly = b.kind === 'window' ? b.y + HEAD / 2 : b.y + Math.min(b.h, ROW) / 2, lx = Math.max(x0, LABEL) + 4;
        ctx.save();
        ctx.beginPath(); ctx.rect(lx, b.y, Math.max(Math.min(x1, st.width) - lx - 2, 0), b.h); ctx.clip();
        ctx.fillText(b.label, lx, ly);
        ctx.restore();
        st.bands.push({ band: i, kind: b.kind, json: b.json, lane: b.lane, x0: x0, x1: x1, y: b.y, h: b.h, t0: b.t0, t1: b.t1,
          label: b.label, more: b.more });
      });
      ctx.restore();
    }
    function markAt(x, y) {
      for (var k = 0; k < st.marks.length; k++) {
        var m = st.marks[k];
        if (x >= m.x0 && x < m.x1 && y >= m.y && y < m.y + m.h) return m;
      }
      return null;
    }
    function bandAt(x, y) { /* a window's band: its process's head lane; a pause's: its GPU lanes */
      for (var k = st.bands.length - 1; k >= 0; k--) {
        var b = st.bands[k], top = b.kind === 'window' ? HEAD : b.h;
        if (x >= Math.max(b.x0, LABEL) && x < Math.max(b.x1, b.x0 + 1) && y >= b.y && y < b.y + top) return b;
      }
      return null;
    }

    /* A line track: each record a level over its interval, joined to the next one
     * where it starts as this one ends (else a gap: nothing is known there); a bar
     * per record drawn, for the pointer. */
    function drawTrack(lane, li, scale) {
      ctx.fillStyle = '#66707a';
      ctx.fillText(lane.label, 10, lane.y + ROW / 2);
      ctx.fillText('max ' + lane.fmt(lane.peak), 10, lane.y + ROW * 1.5);
      ctx.save();
      ctx.beginPath(); ctx.rect(LABEL, lane.y, st.width - LABEL, lane.h); ctx.clip();
      ctx.fillStyle = '#fafbfc';
      ctx.fillRect(LABEL, lane.y, st.width - LABEL, lane.h);
      var base = lane.y + lane.h - 2, room = lane.h - 5, peak = lane.peak || 1;
      var i = lowerBoundEnd(lane.t1, lane.n, st.t0), first = i;
      lane.series.forEach(function (se) {
        ctx.strokeStyle = se.color; ctx.lineWidth = 1.5;
        ctx.beginPath();
        for (var k = first; k < lane.n && lane.t0[k] < st.t1; k++) {
          var x0 = LABEL + (lane.t0[k] - st.t0) * scale, x1 = LABEL + (lane.t1[k] - st.t0) * scale;
          var yv = base - room * se.values[k] / peak;
          if (k === first || lane.t0[k] !== lane.t1[k - 1]) ctx.moveTo(x0, yv); else ctx.lineTo(x0, yv);
          ctx.lineTo(Math.max(x1, x0 + 1), yv);
        }
        ctx.stroke();
      });
      ctx.restore();
      var lastPx = -Infinity;
      for (; i < lane.n && lane.t0[i] < st.t1; i++) {
        var bx0 = LABEL + (lane.t0[i] - st.t0) * scale, bx1 = LABEL + (lane.t1[i] - st.t0) * scale;
        if (bx1 <= lastPx) continue; /* several records in one pixel: the first is the pointer's */
        pushBar(2, Math.max(bx0, lastPx), bx1, lane.y, lane.h, li, 0, i, 0, 0);
        lastPx = Math.max(bx1, bx0 + 1);
      }
    }

    /* the critical path (a red band along the top of each thread's lane) and the
     * hand-offs (an arrow from each signal to the end of the wait it ended; those on
     * the path red), from the report's causality */
    var causal = rep.causality, laneOf = {};
    L.lanes.forEach(function (l) { if (l.kind === 'thread') laneOf[l.proc.pid + ':' + l.thread.tid] = l; });
    var MAX_ARROWS = 5000;
    function drawCausality(scale) {
      st.arrows = []; st.critical = []; st.arrowsLeftOut = 0;
      if (!causal || !st.causal) return;
      ctx.save();
      ctx.beginPath(); ctx.rect(LABEL, 0, st.width - LABEL, L.height); ctx.clip();
      var cp = causal.critical_path, onPath = {};
      (cp ? cp.segments : []).forEach(function (g, i) {
        var lane = laneOf[g.pid + ':' + g.tid];
        if (g.from_pair !== null) onPath[g.from_pair] = true;
        if (!lane || g.end_ns < st.t0 || g.begin_ns > st.t1) return;
        var x0 = Math.max(LABEL + (g.begin_ns - st.t0) * scale, LABEL - 1), x1 = Math.min(LABEL + (g.end_ns - st.t0) * scale, st.width + 1);
        ctx.fillStyle = '#c62828';
        ctx.fillRect(x0, lane.y, Math.max(x1 - x0, 1), 3);
        st.critical.push({ segment: i, x0: x0, x1: x1, y: lane.y, pid: g.pid, tid: g.tid });
      });
      ctx.lineWidth = 1;
      causal.pairs.forEach(function (p, i) {
        var a = laneOf[p.signal_pid + ':' + p.signal_tid], b = laneOf[p.wait_pid + ':' + p.wait_tid];
        if (!a || !b || p.wait_end_ns < st.t0 || p.signal_ns > st.t1) return;
        if (st.arrows.length >= MAX_ARROWS) { st.arrowsLeftOut++; return; }
        var x0 = LABEL + (p.signal_ns - st.t0) * scale, x1 = LABEL + (p.wait_end_ns - st.t0) * scale;
        var y0 = a.y + ROW / 2, y1 = b.y + ROW / 2, crit = !!onPath[i];
        arrow(x0, y0, x1, y1, crit ? '#c62828' : 'rgba(39,96,168,.75)');
        st.arrows.push({ pair: i, name: p.name, x0: x0, y0: y0, x1: x1, y1: y1, critical: crit });
      });
      ctx.restore();
    }

    function arrow(x0, y0, x1, y1, color) {
      ctx.strokeStyle = color;
      ctx.fillStyle = color;
      ctx.beginPath(); ctx.moveTo(x0, y0); ctx.lineTo(x1, y1); ctx.stroke();
      var ang = Math.atan2(y1 - y0, x1 - x0);
      ctx.beginPath(); ctx.moveTo(x1, y1);
      ctx.lineTo(x1 - 6 * Math.cos(ang - 0.4), y1 - 6 * Math.sin(ang - 0.4));
      ctx.lineTo(x1 - 6 * Math.cos(ang + 0.4), y1 - 6 * Math.sin(ang + 0.4));
      ctx.closePath(); ctx.fill();
    }

    /* the selected GPU op's launch: an arrow from the launching span's bar, at the
     * launch, to the op's start */
    var threadLane = [];
    L.lanes.forEach(function (l) { if (l.kind === 'thread') threadLane.push(l); });
    function launchOf(lane, k) { /* the launching span's lane and bar's row, or null */
      var tr = lane.track, ti = tr.thread[k], sp = tr.span[k];
      if (ti === null || sp === null) return null;
      var tl = null;
      threadLane.forEach(function (l) { if (l.proc === lane.proc && l.thread === lane.proc.threads[ti]) tl = l; });
      if (!tl || sp >= tl.spans) return null;
      return { lane: tl, level: tl.thread.level[sp], index: tl.pos[sp] };
    }
    function drawLaunch(scale) {
      st.launch = null;
      var sel = st.selectedGpu;
      if (!sel) return;
      var lane = L.lanes[sel.lane], k = sel.op, tr = lane.track, from = launchOf(lane, k);
      if (!from) return;
      var lv = lane.levels[sel.level], begin = lv.start[sel.index];
      var launch = begin - tr.queue_ns[k];
      var x0 = LABEL + (launch - st.t0) * scale, y0 = from.lane.y + from.level * ROW + ROW / 2;
      var x1 = LABEL + (begin - st.t0) * scale, y1 = lane.y + sel.level * ROW + ROW / 2;
      ctx.save();
      ctx.beginPath(); ctx.rect(LABEL, 0, st.width - LABEL, L.height); ctx.clip();
      var a = st.launch = { x0: x0, y0: y0, x1: x1, y1: y1, lane: sel.lane, op: k, from_lane: L.lanes.indexOf(from.lane),
        from_level: from.level, from_index: from.index };
      ctx.lineWidth = 1.5;
      arrow(a.x0, a.y0, a.x1, a.y1, '#6a1b9a');
      ctx.restore();
    }

    var pending = false;
    function redraw() { if (!pending) { pending = true; requestAnimationFrame(function () { pending = false; draw(); }); } }

    function zoom(factor, x) {
      var tc = tOf(x), span = (st.t1 - st.t0) * factor;
      span = Math.max(span, 100); /* 100 ns across the canvas at most */
      var f = (x - LABEL) / (st.width - LABEL);
      st.t0 = tc - f * span; st.t1 = st.t0 + span;
    }
    canvas.addEventListener('wheel', function (e) {
      e.preventDefault();
      var r = canvas.getBoundingClientRect();
      zoom(Math.pow(1.0015, e.deltaY), e.clientX - r.left);
      redraw();
    }, { passive: false });
    var drag = null;
    canvas.addEventListener('mousedown', function (e) { drag = { x: e.clientX, t0: st.t0, t1: st.t1, moved: false }; canvas.classList.add('dragging'); });
    window.addEventListener('mousemove', function (e) {
      if (!drag) return;
      var dx = e.clientX - drag.x;
      if (Math.abs(dx) > 2) drag.moved = true;
      var dt = dx * (drag.t1 - drag.t0) / (st.width - LABEL);
      st.t0 = drag.t0 - dt; st.t1 = drag.t1 - dt;
      redraw();
    });
    window.addEventListener('mouseup', function (e) {
      if (!drag) return;
      var moved = drag.moved;
      drag = null; canvas.classList.remove('dragging');
      if (!moved) { var r = canvas.getBoundingClientRect(); select(e.clientX - r.left, e.clientY - r.top); }
    });
    wrap.addEventListener('scroll', redraw);
    search.addEventListener('input', function () { setQuery(search.value); redraw(); });
    reset.addEventListener('click', function () { st.t0 = L.t0; st.t1 = L.t1; redraw(); });
    window.addEventListener('resize', function () { if (!root.hidden) { size(); draw(); } });

    function barAt(x, y) {
      for (var k = B.n - 1; k >= 0; k--)
        if (x >= B.x0[k] && x < Math.max(B.x1[k], B.x0[k] + 1) && y >= B.y[k] && y < B.y[k] + B.h[k]) return barObj(k);
      return null;
    }
    /* a record of a line track, in words */
    function trackText(lane, i) {
      return lane.label + ', ' + lane.proc.role + ' pid ' + lane.proc.pid + ': ' +
        lane.series.map(function (se) { return se.name + ' ' + lane.fmt(se.values[i]); }).join(', ') +
        ' from ' + fmtDuration(lane.t0[i]) + ' for ' + fmtDuration(lane.t1[i] - lane.t0[i]) +
        ' (one record of the process sampler: ' + (lane.track === 'rss' ? 'the largest RSS read at the ends of its intervals)' : 'its bytes over its length)');
    }
    /* The tooltip of what is under the pointer: a span and its path's figures from
     * the report, a merged column, a sampled frame, a track's record. */
    var tip = h('div', { id: 'tl-tip', hidden: '' });
    wrap.appendChild(tip);
    function tipLines(b) {
      var lane = L.lanes[b.lane];
      if (b.dropped) return [fmtCount(b.dropped) + ' spans dropped here (timeline full)'];
      if (b.track) return [trackText(lane, b.index)];
      if (b.merged) return [fmtCount(b.merged) + (lane.kind === 'gpu' ? ' GPU records' : ' spans') + ' narrower than a pixel, merged: zoom in'];
      var lv = lane.levels[b.level];
      if (lane.kind === 'gpu') return gpuLines(lane, b.gpu);
      if (lane.kind === 'samples')
        return [lane.names[lv.path[b.index]], fmtDuration(lv.end[b.index] - lv.start[b.index]) + ' sampled (an estimate; merged: time sampled, not when it ran)'];
      var path = lane.proc.paths[lv.path[b.index]], out = [path, 'this span: ' + fmtDuration(lv.end[b.index] - lv.start[b.index])];
      var sx = lane.stats, i = sx ? sx.ix[path] : undefined;
      if (i === undefined) { out.push('the report has no figures for this path'); return out; }
      var p = sx.role.phases[i], e = p.estimated ? '~ ' : '';
      out.push('path (role ' + sx.role.role + '): ' + fmtCount(p.calls) + ' calls, total ' + e + fmtDuration(p.total_ns) +
        ', self ' + (p.self_estimated ? '~ ' : '') + fmtDuration(p.self_ns));
      out.push('p50 ' + e + fmtDuration(p.p50_ns) + ', p99 ' + e + fmtDuration(p.p99_ns) + ', wait ~ ' + fmtShare(p.wait_share));
      return out;
    }
    /* a GPU op in words: name, kind, duration, bytes, launching span, launch to start */
    function gpuLines(lane, k) {
      var tr = lane.track, p = lane.proc, kind = tr.kind[k];
      var out = [gpuName(lane, k), (GPU_KINDS[kind] || 'record') + ' on ' + lane.label + ', ' + p.role + ' pid ' + p.pid,
        'duration ' + fmtDuration(tr.dur[k])];
      if (kind !== 1) out.push('bytes ' + fmtBytes(tr.bytes[k]));
      if (tr.thread[k] === null) { out.push('launch not seen (before the session, or past the collector\'s table)'); return out; }
      var th = p.threads[tr.thread[k]];
      out.push('launched by ' + (tr.path[k] === null ? '(no span open)' : p.paths[tr.path[k]]) + ' on ' + ((th && th.name) || 'thread') + ' ' + (th ? th.tid : ''));
      out.push('launch to start ' + (tr.queue_ns[k] < 0 ? fmtDelta(tr.queue_ns[k]) : fmtDuration(tr.queue_ns[k])));
      return out;
    }
    function caveatLines(m) { return m.caveats.map(function (i) { return rep.caveats[i].message; }); }
    function hover(x, y) {
      var m = drag ? null : markAt(x, y), b = drag || m ? null : barAt(x, y), band = drag || m || b ? null : bandAt(x, y);
      if (!m && !b && !band) { tip.hidden = true; return null; }
      tip.textContent = '';
      (m ? caveatLines(m) : band ? [band.label, band.more] : tipLines(b)).forEach(function (line, k) { tip.appendChild(h(k ? 'div' : 'b', { text: line })); });
      tip.hidden = false;
      var left = Math.min(x + 12, st.width - tip.offsetWidth - 4);
      tip.style.left = Math.max(left, 0) + 'px';
      tip.style.top = (y + 16) + 'px';
      return tip.innerText;
    }
    canvas.addEventListener('mousemove', function (e) {
      var r = canvas.getBoundingClientRect();
      hover(e.clientX - r.left, e.clientY - r.top);
    });
    canvas.addEventListener('mouseleave', function () { tip.hidden = true; });

    function select(x, y) {
      var m = markAt(x, y), b = m ? null : barAt(x, y), band = m || b ? null : bandAt(x, y);
      detail.textContent = '';
      if (st.selectedGpu) { st.selectedGpu = null; redraw(); }
      if (m) {
        caveatLines(m).forEach(function (line) { detail.appendChild(h('div', { class: 'caveat', text: line })); });
        return m;
      }
      if (band) { detail.appendChild(h('b', { text: band.label })); detail.appendChild(h('div', { text: band.more })); return band; }
      if (!b) { detail.textContent = 'No span there.'; return null; }
      var lane = L.lanes[b.lane];
      if (b.dropped) { detail.textContent = fmtCount(b.dropped) + ' spans of ' + lane.label + ' were not recorded from here on: its timeline was full (max_spans ' + fmtCount(lane.proc.max_spans) + '). The Summary counts them; the timeline cannot show them.'; return b; }
      if (b.track) { detail.textContent = trackText(lane, b.index); return b; }
      var lv = lane.levels[b.level];
      if (b.merged) {
        detail.textContent = fmtCount(b.merged) + ' spans narrower than a pixel, merged (' + lane.label + ', level ' + b.level + '): zoom in to see them.';
        return b;
      }
      if (lane.kind === 'gpu') {
        st.selectedGpu = { lane: b.lane, level: b.level, index: b.index, op: b.gpu };
        gpuLines(lane, b.gpu).forEach(function (line, k) { detail.appendChild(h(k ? 'div' : 'b', { text: line })); });
        if (!launchOf(lane, b.gpu))
          detail.appendChild(h('div', { text: lane.track.thread[b.gpu] === null ? 'No arrow: its launch was not seen.' :
            lane.track.path[b.gpu] === null ? 'No arrow: no span was open at its launch.' : 'No arrow: the timeline does not hold the launching span (dropped).' }));
        draw();
        return b;
      }
      if (lane.kind === 'samples') {
        detail.appendChild(h('div', null, h('b', { text: lane.names[lv.path[b.index]] }), '  ' + lane.label + ': ' + fmtDuration(lv.end[b.index] - lv.start[b.index]) + ' sampled (an estimate). The samples are merged: laid side by side from the ' +
          'recording\'s start, each stack as wide as the time it stands for, so the x axis here is time sampled, not when it ran.'));
        return b;
      }
      var path = lane.proc.paths[lv.path[b.index]];
      detail.appendChild(h('div', null, h('b', { text: path }), '  ' + lane.label + ', ' + lane.proc.role + ' pid ' + lane.proc.pid +
        ': began at ' + fmtDuration(lv.start[b.index]) + ', took ' + fmtDuration(lv.end[b.index] - lv.start[b.index])));
      var s = lane.stats, i = s ? s.ix[path] : undefined;
      if (i === undefined) { detail.appendChild(h('div', { text: 'The report has no figures for this path.' })); return b; }
      var p = s.role.phases[i], ri = (rep.roles || []).indexOf(s.role), Q = '/roles/' + ri + '/phases/' + i;
      detail.appendChild(table([{ label: 'path (role ' + s.role.role + ')', text: 1 }, { label: 'calls' }, { label: 'total' }, { label: 'self' }, { label: 'p50' }, { label: 'p99' }, { label: 'wait' }],
        [[cell(path), fig(Q + '/calls', p.calls, 'count'), fig(Q + '/total_ns', p.total_ns, 'ns', p.estimated), fig(Q + '/self_ns', p.self_ns, 'ns', p.self_estimated),
          fig(Q + '/p50_ns', p.p50_ns, 'ns', p.estimated), fig(Q + '/p99_ns', p.p99_ns, 'ns', p.estimated), fig(Q + '/wait_share', p.wait_share, 'share', true)]]));
      return b;
    }

    var api = {
      show: function () { size(); draw(); },
      lanes: function () {
        return L.lanes.map(function (l) {
          return { kind: l.kind, y: l.y, h: l.h, label: l.label, pid: l.chart ? l.chart.pid : l.proc ? l.proc.pid : null,
            tid: l.thread ? l.thread.tid : l.chart ? l.chart.tid : null };
        });
      },
      range: function () { return { t0: st.t0, t1: st.t1, full0: L.t0, full1: L.t1, label: LABEL, width: st.width }; },
      setRange: function (t0, t1) { st.t0 = t0; st.t1 = t1; draw(); },
      xOf: xOf, tOf: tOf,
      barsAt: function (x) {
        var out = [];
        for (var k = 0; k < B.n; k++) if (x >= B.x0[k] && x < Math.max(B.x1[k], B.x0[k] + 1)) out.push(barObj(k));
        return out;
      },
      bars: function () { var out = []; for (var k = 0; k < B.n; k++) out.push(barObj(k)); return out; },
      zoom: function (factor, x) { zoom(factor, x); draw(); return st.frameMs; },
      pan: function (dx) { var dt = dx * (st.t1 - st.t0) / (st.width - LABEL); st.t0 -= dt; st.t1 -= dt; draw(); return st.frameMs; },
      search: function (q) { search.value = q; setQuery(q); draw(); var n = 0; for (var k = 0; k < B.n; k++) n += B.hit[k]; return n; },
      select: function (x, y) { var b = select(x, y); return b ? detail.textContent : null; },
      frameMs: function () { return st.frameMs; },
      charts: function () { /* the samples lanes' slices, as drawn from the data */
        return L.lanes.filter(function (l) { return l.kind === 'samples'; }).map(function (l) {
          var out = [];
          l.levels.forEach(function (lv, d) {
            for (var i = 0; i < lv.n; i++) out.push({ t0: lv.start[i], t1: lv.end[i], depth: d, name: l.names[lv.path[i]] });
          });
          return { pid: l.chart.pid, tid: l.chart.tid, lane: L.lanes.indexOf(l), slices: out };
        });
      },
      tracks: function () { /* the line tracks' records, as drawn from the data */
        return L.lanes.filter(function (l) { return l.kind === 'track'; }).map(function (l) {
          var pts = [];
          for (var i = 0; i < l.n; i++) {
            var pt = { t0: l.t0[i], t1: l.t1[i] };
            l.series.forEach(function (se) { pt[se.name] = se.values[i]; });
            pts.push(pt);
          }
          return { pid: l.proc.pid, file: l.proc.file, track: l.track, lane: L.lanes.indexOf(l), y: l.y, h: l.h, peak: l.peak, points: pts };
        });
      },
      gpu: function () { /* the GPU lanes' records, as drawn from the data */
        return L.lanes.filter(function (l) { return l.kind === 'gpu'; }).map(function (l) {
          var tr = l.track, ops = [];
          l.levels.forEach(function (lv, r) {
            for (var i = 0; i < lv.n; i++) {
              var k = lv.op[i];
              ops.push({ t0: lv.start[i], t1: lv.end[i], row: r, index: i, op: k, name: gpuName(l, k), kind: GPU_KINDS[tr.kind[k]],
                bytes: tr.bytes[k], queue_ns: tr.queue_ns[k], path: tr.path[k] === null ? null : l.proc.paths[tr.path[k]],
                thread: tr.thread[k], span: tr.span[k] });
            }
          });
          return { pid: l.proc.pid, device: tr.device, stream: tr.stream, label: l.label, lane: L.lanes.indexOf(l), y: l.y, h: l.h, ops: ops };
        });
      },
      launch: function () { return st.launch; },
      hover: hover,
      arrows: function () { return st.arrows; },
      marks: function () { return st.marks; },
      bands: function () { return st.bands; },
      critical: function () { return st.critical; }
    };
    return { el: root, api: api };
  }

  /* ---- Flame ---- */

  function flame(view) {
    var root = h('section', { class: 'tab', id: 'tab-flame', hidden: '' });
    var sets = view.processes.filter(function (p) { return p.samples; });
    if (!sets.length) {
      root.appendChild(h('p', { class: 'none', id: 'fl-none', text: 'No Python stack samples in this run (lapse record, or lapse run with the PYTHON feature, take them).' }));
      return { el: root, api: { show: function () {}, frames: function () { return []; } } };
    }
    var roleSel = h('select', { id: 'fl-role' }, h('option', { value: '', text: 'every role' }));
    var procSel = h('select', { id: 'fl-process' }, h('option', { value: '', text: 'every process' }));
    var threadSel = h('select', { id: 'fl-thread' }, h('option', { value: '', text: 'every thread' }));
    var spanSel = h('select', { id: 'fl-span' }, h('option', { value: '', text: 'anywhere' }));
    var info = h('span', { class: 'muted', id: 'fl-info' });
    root.appendChild(h('div', { id: 'fl-bar' }, 'role ', roleSel, ' process ', procSel, ' thread ', threadSel,
      ' inside span ', spanSel, info));
    root.appendChild(h('p', { class: 'note', text: 'Inside span X: the samples taken while X (or a span under it) was the span path ' +
      'open on their thread, as the sampler read it; the samples are aggregated stacks with no time of their own, so this is ' +
      'the span stack each sample recorded, not a match of times.' }));
    var wrap = h('div', { id: 'fl-wrap' });
    root.appendChild(wrap);
    var pids = {}, threads = {}, roles = {}, spans = {};
    var NO_SPAN = '\u0000none';
    sets.forEach(function (p) {
      var s = p.samples, st = s.stacks;
      roles[p.role] = true;
      for (var i = 0; i < st.pid.length; i++) {
        pids[st.pid[i]] = true;
        threads[st.pid[i] + ':' + st.tid[i]] = s.strings[st.thread_name[i]] || '';
        var sp = st.span_path[i] ? s.strings[st.span_path[i]] : '';
        for (var at = sp.length; sp && at > 0; at = sp.lastIndexOf('/', at - 1)) spans[sp.slice(0, at)] = true;
      }
    });
    Object.keys(roles).sort().forEach(function (r) { roleSel.appendChild(h('option', { value: r, text: r })); });
    Object.keys(spans).sort().forEach(function (x) { spanSel.appendChild(h('option', { value: x, text: x })); });
    spanSel.appendChild(h('option', { value: NO_SPAN, text: '(no span open)' }));
    function inSpan(sp) {
      var want = spanSel.value;
      if (!want) return true;
      if (want === NO_SPAN) return !sp;
      return sp === want || sp.slice(0, want.length + 1) === want + '/';
    }
    Object.keys(pids).sort(function (a, b) { return a - b; }).forEach(function (pid) { procSel.appendChild(h('option', { value: pid, text: 'pid ' + pid })); });
    function fillThreads() {
      threadSel.textContent = '';
      threadSel.appendChild(h('option', { value: '', text: 'every thread' }));
      Object.keys(threads).sort().forEach(function (k) {
        var pt = k.split(':');
        if (procSel.value && pt[0] !== procSel.value) return;
        threadSel.appendChild(h('option', { value: k, text: (threads[k] || 'thread') + ' ' + pt[1] + ' (pid ' + pt[0] + ')' }));
      });
    }
    fillThreads();

    function build() {
      var tree = { name: 'all', w: 0, n: 0, kids: new Map() };
      sets.forEach(function (p) {
        var s = p.samples, st = s.stacks, fr = s.frames, ids = s.frame_ids;
        if (roleSel.value && p.role !== roleSel.value) return;
        for (var i = 0; i < st.pid.length; i++) {
          if (procSel.value && String(st.pid[i]) !== procSel.value) continue;
          if (threadSel.value && st.pid[i] + ':' + st.tid[i] !== threadSel.value) continue;
          if (!inSpan(st.span_path[i] ? s.strings[st.span_path[i]] : '')) continue;
          var node = tree, w = st.weight_ns[i], c = st.count[i];
          node.w += w; node.n += c;
          for (var d = 0; d < st.depth[i]; d++) {
            var f = ids[st.first[i] + d], fn = s.strings[fr[3 * f]], file = s.strings[fr[3 * f + 1]];
            var key = fn + '\u0000' + file;
            var kid = node.kids.get(key);
            if (!kid) { kid = { name: fn, file: file, w: 0, n: 0, kids: new Map() }; node.kids.set(key, kid); }
            kid.w += w; kid.n += c;
            node = kid;
          }
        }
      });
      return tree;
    }

    var focus = null, tree = null, drawn = [];
    function render() {
      wrap.textContent = '';
      drawn = [];
      var W = Math.max(wrap.clientWidth, 300), H = 18, rows = 0;
      var top = focus || tree;
      function place(node, x, w, depth) {
        if (w < 0.5) return;
        rows = Math.max(rows, depth + 1);
        var label = node.name + (node.file ? ' (' + node.file + ')' : '');
        var share = tree.w ? node.w / tree.w : 0;
        var div = h('div', { class: 'fl-frame', title: label + ': ' + fmtDuration(node.w) + ' sampled, ' + fmtCount(node.n) + ' samples, ' + fmtShare(share) + ' (estimates)' });
        div.style.left = x + 'px'; div.style.width = w + 'px'; div.style.top = depth * H + 'px';
        div.style.background = node === tree ? '#cfd6de' : 'hsl(' + (20 + hue(node.name) % 40) + ',75%,' + (62 + hue(node.file || '') % 16) + '%)';
        div.textContent = w > 24 ? label : '';
        div.addEventListener('click', function () { focus = node === tree ? null : node; render(); });
        wrap.appendChild(div);
        drawn.push({ name: node.name, x: x, w: w, depth: depth, weight_ns: node.w, samples: node.n });
        var kids = Array.from(node.kids.values()).sort(function (a, b) { return b.w - a.w; });
        var cx = x;
        kids.forEach(function (k) { var kw = node.w ? w * k.w / node.w : 0; place(k, cx, kw, depth + 1); cx += kw; });
      }
      place(top, 0, W, 0);
      wrap.style.height = (rows * H + 4) + 'px';
      info.textContent = fmtCount(tree.n) + ' samples, ' + fmtDuration(tree.w) + ' sampled (estimates)' + (focus ? ' · zoomed into ' + focus.name + ': click it to go back' : '');
    }
    function refresh() { tree = build(); focus = null; render(); }
    procSel.addEventListener('change', function () { fillThreads(); refresh(); });
    threadSel.addEventListener('change', refresh);
    roleSel.addEventListener('change', refresh);
    spanSel.addEventListener('change', refresh);
    return { el: root, api: {
      show: function () { if (!tree) refresh(); else render(); },
      frames: function () { return drawn; },
      filter: function (pid, thread, role, span) {
        procSel.value = pid || ''; fillThreads(); threadSel.value = thread || '';
        roleSel.value = role || ''; spanSel.value = span === null ? NO_SPAN : span || '';
        refresh(); return drawn;
      },
      spans: function () { return Array.prototype.map.call(spanSel.options, function (o) { return o.value; }); }
    } };
  }

  /* ---- Diff (two runs: the page holds `lapse diff A B --json`) ---- */

  function diffTab(d) {
    var root = h('section', { class: 'tab', id: 'tab-diff' });
    root.appendChild(h('h2', { text: 'Diff of two runs, keyed by ' + d.key }));
    var facts = h('table', { class: 'sides' });
    facts.appendChild(h('thead', null, h('tr', null, h('th', { class: 'text', text: '' }), h('th', { class: 'text', text: 'run' }),
      h('th', { class: 'text', text: 'input' }), h('th', { text: 'processes' }), h('th', { class: 'text', text: 'roles' }), h('th', { text: 'unreadable files' }))));
    var fb = h('tbody');
    ['a', 'b'].forEach(function (k) {
      var s = d[k], roles = Object.keys(s.roles || {}).map(function (r) { return r + ' x' + s.roles[r]; }).join(', ');
      fb.appendChild(h('tr', null, cell(k.toUpperCase()), cell(s.run_id || '-'), cell(s.input), fig('/' + k + '/processes', s.processes, 'count'),
        cell(roles || '-'), fig('/' + k + '/unreadable_files', s.unreadable_files, 'count')));
    });
    facts.appendChild(fb);
    root.appendChild(facts);
    var S = d.summary;
    var sum = h('p', { id: 'diff-summary' });
    function sfig(key, label) {
      sum.appendChild(h('span', { 'data-json': '/summary/' + key, 'data-kind': 'count', 'data-value': JSON.stringify(S[key]), text: fmtCount(S[key]) }));
      sum.appendChild(document.createTextNode(label));
    }
    sfig('rows', ' paths: '); sfig('changed', ' changed, '); sfig('only_a', ' only in A, '); sfig('only_b', ' only in B, ');
    sfig('unchanged', ' no real change.');
    root.appendChild(sum);
    if (d.key !== 'path' && !S.roles_in_common)
      root.appendChild(h('p', { class: 'caveats', text: 'No role is on both sides, so no path matches; `lapse view A B --by-path` merges the roles of each side.' }));

    var rows = d.rows.map(function (r, i) {
      var R = '/rows/' + i, both = r.presence === 'both';
      var verdict = r.presence === 'only_a' ? 'ONLY IN A' : r.presence === 'only_b' ? 'ONLY IN B' :
        r.changed ? 'CHANGED, ' + (r.p50_ratio > 1 ? 'slower' : 'faster') : 'no real change';
      var flags = [];
      if (r.few_calls) flags.push('few calls');
      if (r.tail_moved) flags.push('tail moved');
      var vcell = h('td', { class: 'text verdict', 'data-json': R + '/changed', 'data-kind': 'verdict',
        'data-value': JSON.stringify(r.changed), 'data-presence': r.presence, 'data-sort': verdict, text: verdict });
      return { cls: r.changed ? 'changed' : both ? null : 'one-side', cells: [
        cell(r.role || '-'), cell(r.path), vcell,
        fig(R + '/calls_a', r.calls_a, 'count'), fig(R + '/calls_b', r.calls_b, 'count'),
        fig(R + '/mean_a_ns', r.mean_a_ns, 'ns'), fig(R + '/mean_b_ns', r.mean_b_ns, 'ns'), fig(R + '/mean_ratio', r.mean_ratio, 'ratio'),
        fig(R + '/p50_a_ns', r.p50_a_ns, 'ns'), fig(R + '/p50_b_ns', r.p50_b_ns, 'ns'), fig(R + '/p50_ratio', r.p50_ratio, 'ratio'),
        fig(R + '/p99_a_ns', r.p99_a_ns, 'ns'), fig(R + '/p99_b_ns', r.p99_b_ns, 'ns'), fig(R + '/p99_ratio', r.p99_ratio, 'ratio'),
        fig(R + '/total_a_ns', r.total_a_ns, 'ns'), fig(R + '/total_b_ns', r.total_b_ns, 'ns'), fig(R + '/total_delta_ns', r.total_delta_ns, 'dns'),
        fig(R + '/wait_share_a', r.wait_share_a, 'share', true), fig(R + '/wait_share_b', r.wait_share_b, 'share', true),
        fig(R + '/ks_d', r.ks_d, 'd3'), fig(R + '/ks_threshold', r.ks_threshold, 'd3'), fig(R + '/ks_significant', r.ks_significant, 'bool'),
        h('td', { class: 'text flags', 'data-sort': flags.join(', '), text: flags.join(', ') })] };
    });
    root.appendChild(table([{ label: 'role', text: 1 }, { label: 'path', text: 1 }, { label: 'verdict', text: 1 },
      { label: 'calls A' }, { label: 'calls B' }, { label: 'mean A' }, { label: 'mean B' }, { label: 'B/A' },
      { label: 'p50 A' }, { label: 'p50 B' }, { label: 'B/A' }, { label: 'p99 A' }, { label: 'p99 B' }, { label: 'B/A' },
      { label: 'total A' }, { label: 'total B' }, { label: 'B-A' }, { label: 'wait A' }, { label: 'wait B' },
      { label: 'KS D' }, { label: 'threshold' }, { label: 'D > threshold' }, { label: 'flags', text: 1 }], rows, 'diff'));
    root.appendChild(h('h3', { text: 'RULE' }));
    root.appendChild(h('p', { class: 'note', id: 'diff-rule', 'data-json': '/rule/text', 'data-kind': 'text', 'data-value': JSON.stringify(d.rule.text), text: d.rule.text }));
    root.appendChild(h('p', { class: 'note', text: 'wait = share of the CPU sampler\'s ticks at which the thread was off CPU, an estimate (~); - = not on that side, or too few ticks.' }));
    root.appendChild(h('h2', { text: 'CAVEATS' }));
    if (!d.caveats.length) root.appendChild(h('p', { id: 'caveats', class: 'none', text: 'CAVEATS none: every file of both runs was read, complete.' }));
    else {
      var ul = h('ul', { class: 'caveats', id: 'caveats' });
      d.caveats.forEach(function (c, i) {
        ul.appendChild(h('li', { 'data-json': '/caveats/' + i + '/message', 'data-kind': 'text', 'data-value': JSON.stringify(c.message) },
          h('b', { text: c.side.toUpperCase() + ' ' }), c.message));
      });
      root.appendChild(ul);
    }
    return root;
  }

  /* The caveats' count in the page's head ("3 caveats"): a click opens the list under
   * the head, on every tab, each caveat in the report's words (text: a caveat's line). */
  function caveatCount(caveats, text) {
    if (!caveats || !caveats.length) return;
    var top = document.getElementById('top');
    var list = h('ul', { class: 'caveats', id: 'caveat-list' });
    caveats.forEach(function (c, i) {
      list.appendChild(h('li', { 'data-json': '/caveats/' + i + '/message', 'data-kind': 'text', 'data-value': JSON.stringify(c.message) }, text(c)));
    });
    var panel = h('div', { id: 'caveat-panel', hidden: '' }, list);
    var b = h('button', { type: 'button', id: 'caveat-count', 'aria-expanded': 'false',
      text: caveats.length + ' caveat' + (caveats.length === 1 ? '' : 's') });
    b.addEventListener('click', function () { panel.hidden = !panel.hidden; b.setAttribute('aria-expanded', String(!panel.hidden)); });
    top.appendChild(b);
    top.parentNode.insertBefore(panel, top.nextSibling);
  }

  function startDiff(d) {
    var app = document.getElementById('app');
    app.textContent = '';
    app.appendChild(diffTab(d));
    var b = h('button', { type: 'button', 'data-tab': 'diff', class: 'active', text: 'Diff' });
    document.getElementById('tabs').appendChild(b);
    caveatCount(d.caveats, function (c) { return c.side.toUpperCase() + ' ' + c.message; });
    hook.show = function () {};
    hook.diff = d;
  }

  /* ---- the page ---- */

  function start(rep, view) {
    var app = document.getElementById('app');
    app.textContent = '';
    var tabs = document.getElementById('tabs');
    var sum = summary(rep), tl = timeline(view, rep), fl = flame(view);
    var list = [['Summary', sum, null], ['Timeline', tl.el, tl.api], ['Flame', fl.el, fl.api]];
    list.forEach(function (t) {
      app.appendChild(t[1]);
      var b = h('button', { type: 'button', 'data-tab': t[0].toLowerCase(), text: t[0] });
      b.addEventListener('click', function () { hook.show(t[0].toLowerCase()); });
      tabs.appendChild(b);
    });
    hook.show = function (name) {
      list.forEach(function (t) {
        var on = t[0].toLowerCase() === name;
        t[1].hidden = !on;
        tabs.querySelector('[data-tab="' + t[0].toLowerCase() + '"]').classList.toggle('active', on);
        if (on && t[2]) t[2].show();
      });
    };
    caveatCount(rep.caveats, function (c) { return c.message; });
    hook.report = rep;
    hook.timeline = tl.api;
    hook.flame = fl.api;
    hook.show('summary');
  }

  var t0 = performance.now();
  var isDiff = !!document.getElementById('lapse-diff');
  Promise.all(isDiff ? [decodeBlob('lapse-diff')] : [decodeBlob('lapse-report'), decodeBlob('lapse-view')]).then(function (docs) {
    hook.decodedMs = performance.now() - t0;
    if (isDiff) startDiff(docs[0]);
    else start(docs[0], docs[1]);
    hook.readyMs = performance.now();
    hook.ready = true;
  }).catch(function (e) {
    hook.error = String(e && e.message || e);
    var app = document.getElementById('app');
    app.textContent = '';
    app.appendChild(h('p', { class: 'caveats', text: 'This page cannot show its report: ' + hook.error }));
  });
})();
