// Drives the flame graph's inline script (src/samples/write_flamegraph.c) in node,
// on a small DOM built from the SVG (converted to JSON by python3's xml module, see
// tests/c/test_samples.c): init, zoom on a frame, search, reset. Prints what a
// viewer would see after each step, one line each; the C test compares them.
//   node flamegraph_check.js SVG.json
'use strict';
const fs = require('fs');
const tree = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));

function make(node, parent) {
  const el = {
    tagName: node.tag, parentNode: parent, attrs: Object.assign({}, node.attrs),
    style: {}, children: [], listeners: {},
    get id() { return this.attrs.id || ''; },
    getAttribute(k) { return k in this.attrs ? this.attrs[k] : null; },
    setAttribute(k, v) { this.attrs[k] = String(v); },
    hasAttribute(k) { return k in this.attrs; },
    getElementsByTagName(t) {
      const out = [];
      const walk = (e) => { for (const c of e.children) { if (c.tagName === t) out.push(c); walk(c); } };
      walk(this);
      return out;
    },
    addEventListener(type, fn) { this.listeners[type] = fn; },
  };
  // text: a first child text node, and textContent
  el.text = node.text || '';
  el.firstChild = { get nodeValue() { return el.text; }, set nodeValue(v) { el.text = v; } };
  Object.defineProperty(el, 'textContent', { get() { return el.text; }, set(v) { el.text = v; } });
  for (const c of node.children) el.children.push(make(c, el));
  return el;
}
const root = make(tree, null);
const byId = (id) => { let hit = null; const walk = (e) => { if (e.id === id) hit = hit || e; e.children.forEach(walk); }; walk(root); return hit; };
global.document = { documentElement: root, getElementById: byId };
global.window = { addEventListener() {} };
global.prompt = () => null;
const script = root.children.find((c) => c.tagName === 'script').text;
eval(script + '\nglobal.api = {init, zoom, search, reset, on_click};');

const frames = byId('frames').getElementsByTagName('g');
const label = (g) => g.getAttribute('data-label');
function show(step) {
  const parts = [];
  for (const g of frames) {
    if (g.style.display === 'none') continue;
    const r = g.getElementsByTagName('rect')[0];
    const t = g.getElementsByTagName('text')[0];
    parts.push(label(g) + '@' + Math.round(parseFloat(r.getAttribute('x'))) + '+' +
               Math.round(parseFloat(r.getAttribute('width'))) +
               (r.getAttribute('fill') === 'rgb(230,0,230)' ? '*' : '') +
               (g.style.opacity === '0.5' ? '~' : '') + (t.text ? '' : '!'));
  }
  console.log(step + ': ' + parts.join(' | '));
}
api.init({});
show('init');
// a click on a frame's rect zooms on it
const target = Array.from(frames).find((g) => label(g).startsWith('Worker.work'));
root.listeners.click({ target: target.getElementsByTagName('rect')[0] });
show('zoom');
console.log('unzoom button: ' + byId('unzoom').style.opacity);
api.search('^leaf');
show('search');
console.log('matched: ' + byId('matched').firstChild.nodeValue);
api.reset();
show('reset');
console.log('matched: "' + byId('matched').firstChild.nodeValue + '" search button: ' +
            byId('search').firstChild.nodeValue);
