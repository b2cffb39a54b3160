// SPDX-License-Identifier: MIT
// The live view's page: the network and plan from /topology, drawn with
// cytoscape.js, and each link's load from the /events stream, with the
// last round of each task and the timeline of the scenario's events.
'use strict';

const token = new URLSearchParams(location.search).get('token') || '';
const q = '?token=' + encodeURIComponent(token);
const $ = (id) => document.getElementById(id);

// The edge of the graph a directed link of the plan loads:
// "s1>r1" is s1's access link, "lp0:r1>r2" lightpath 0.
function edgeOfLink(name) {
  const colon = name.indexOf(':');
  if (colon >= 0) return name.slice(0, colon);
  const [a, b] = name.split('>');
  return 'acc:' + (servers.has(a) ? a : b);
}

// The edge a hop of a tree path takes: an access link or a lightpath.
function edgeOfHop(path, k) {
  const via = path.via[k];
  if (via !== 'access') return via;
  const a = path.nodes[k], b = path.nodes[k + 1];
  return 'acc:' + (servers.has(a) ? a : b);
}

const servers = new Set();
let cy = null, topo = null, linkEdge = new Map(), updates = 0;

function problem(text) {
  const p = $('problem');
  p.textContent = text;
  p.hidden = false;
}

// Where to draw each node: ROADMs where the scenario places them (scaled
// to the pane), routers just under theirs, servers around their router.
function positions(nodes) {
  const roadms = nodes.filter((n) => n.kind === 'roadm' && 'x' in n);
  if (!roadms.length) return null;
  const xs = roadms.map((n) => n.x), ys = roadms.map((n) => n.y);
  const w = Math.max(...xs) - Math.min(...xs) || 1;
  const h = Math.max(...ys) - Math.min(...ys) || 1;
  const s = 700 / Math.max(w, h);
  const pos = {};
  for (const n of roadms)
    pos[n.name] = { x: (n.x - Math.min(...xs)) * s,
                    y: (Math.max(...ys) - n.y) * s };
  const byAttach = {};
  for (const n of nodes) {
    if (n.kind === 'roadm') continue;
    (byAttach[n.attach] = byAttach[n.attach] || []).push(n);
  }
  for (const n of nodes.filter((m) => m.kind === 'router')) {
    const r = pos[n.attach];
    if (r) pos[n.name] = { x: r.x + 28, y: r.y + 28 };
  }
  for (const n of nodes.filter((m) => m.kind === 'router')) {
    const at = pos[n.name], kids = byAttach[n.name] || [];
    kids.forEach((k, i) => {
      const a = (2 * Math.PI * i) / Math.max(kids.length, 1);
      if (at) pos[k.name] = { x: at.x + 42 * Math.cos(a),
                              y: at.y + 42 * Math.sin(a) };
    });
  }
  return pos;
}

function elements(t) {
  const els = [];
  for (const n of t.graph.nodes) {
    if (n.kind === 'server') servers.add(n.name);
    els.push({ data: { id: n.name, label: n.name }, classes: n.kind });
  }
  t.graph.fibres.forEach((f, i) => els.push({
    data: { id: 'f' + i, source: f.a, target: f.b,
            label: f.lit + '/' + f.wavelengths },
    classes: 'fibre' }));
  for (const n of t.graph.nodes) {
    if (n.kind === 'router')
      els.push({ data: { id: 'ad:' + n.name, source: n.name,
                         target: n.attach }, classes: 'adddrop' });
    if (n.kind === 'server')
      els.push({ data: { id: 'acc:' + n.name, source: n.name,
                         target: n.attach }, classes: 'access' });
  }
  for (const lp of t.lightpaths)
    els.push({ data: { id: 'lp' + lp.id, source: lp.a, target: lp.b,
                       label: 'lp' + lp.id }, classes: 'lightpath' });
  return els;
}

function draw(t) {
  const pos = positions(t.graph.nodes);
  cy = cytoscape({
    container: $('graph'),
    elements: elements(t),
    layout: pos ? { name: 'preset', positions: pos, fit: true, padding: 30 }
                : { name: 'cose', animate: false },
    style: [
      { selector: 'node', style: { label: 'data(label)', 'font-size': 9,
          'text-valign': 'bottom', width: 14, height: 14 } },
      { selector: '.roadm', style: { 'background-color': '#4a5a8a',
          shape: 'round-rectangle', width: 22, height: 22 } },
      { selector: '.router', style: { 'background-color': '#7a9a5a' } },
      { selector: '.server', style: { 'background-color': '#c08a3a',
          width: 10, height: 10 } },
      { selector: 'edge', style: { width: 2, 'line-color': '#bbb',
          'curve-style': 'bezier' } },
      { selector: '.fibre', style: { width: 4, 'line-color': '#999',
          label: 'data(label)', 'font-size': 9 } },
      { selector: '.adddrop', style: { width: 1 } },
      { selector: '.lightpath', style: { 'line-style': 'dashed',
          'line-color': '#556' } },
      // the load (of the link's rate) as width and colour; a selected
      // task's trees keep their own colour over it
      { selector: 'edge[load]', style: {
          width: 'mapData(load, 0, 1, 2, 12)',
          'line-color': 'mapData(load, 0, 1, #8a8f99, #e02020)' } },
      { selector: '.bcast', style: { 'line-color': '#1f6fd1',
          'line-style': 'solid', 'z-index': 9 } },
      { selector: '.upload', style: { 'line-color': '#d1661f',
          'line-style': 'solid', 'z-index': 9 } },
      { selector: '.bcast.upload', style: { 'line-color': '#8a3fc1' } },
      { selector: '.fibre.cut', style: { 'line-color': '#d00',
          'line-style': 'dotted', label: 'cut' } },
    ],
  });
  // a fibre clicked: cut it, or repair it if it is cut
  cy.on('tap', 'edge.fibre', (ev) => toggleFibre(ev.target));
}

// What the page last asked for and was told, for a person and a test.
let said = null;

async function toggleFibre(edge) {
  const f = topo.graph.fibres[Number(edge.id().slice(1))];
  const what = edge.hasClass('cut') ? 'repair' : 'cut';
  const r = await fetch(`${what}?a=${encodeURIComponent(f.a)}` +
                        `&b=${encodeURIComponent(f.b)}`,
                        { method: 'POST',
                          headers: { 'X-Twinlab-Token': token } });
  const body = await r.json().catch(() => ({ ok: false,
                                             message: 'status ' + r.status }));
  said = { what, fibre: edge.id(), ok: body.ok, message: body.message };
  $('said').textContent = body.message;
  $('said').className = body.ok ? 'ok' : 'bad';
}

// Background traffic beside the task picked (POST /traffic).
async function sendTraffic(ev) {
  ev.preventDefault();
  const task = $('task').value;
  const r = await fetch(`traffic?task=${encodeURIComponent(task)}` +
                        `&gbps=${encodeURIComponent($('gbps').value)}` +
                        `&for_s=${encodeURIComponent($('for_s').value)}`,
                        { method: 'POST',
                          headers: { 'X-Twinlab-Token': token } });
  const body = await r.json().catch(() => ({ ok: false,
                                             message: 'status ' + r.status }));
  said = { what: 'traffic', task, ok: body.ok, message: body.message };
  $('said').textContent = body.message;
  $('said').className = body.ok ? 'ok' : 'bad';
}

// the task the teacher picked, kept while the view waits for the run's
// next attempt (planned again, recalibrated) and picked again in it
let pickedTask = '';

function showTask(name) {
  pickedTask = name;
  $('send').disabled = !name;
  if (!cy) return;
  cy.edges().removeClass('bcast upload');
  // a followed timeline's epoch lists a task again where it runs over
  // new trees, the one before it blocked: the one that runs
  const task = topo.tasks.find((x) => x.name === name && !x.blocked) ||
               topo.tasks.find((x) => x.name === name);
  if (!task) return;
  for (const [tree, cls] of [[task.broadcast, 'bcast'],
                             [task.upload, 'upload']])
    for (const path of tree || [])
      for (let k = 0; k < path.via.length; k++)
        cy.$id(edgeOfHop(path, k)).addClass(cls);
}

// One load event: each edge as loaded as its busier direction.
function onLoad(msg) {
  const load = new Map();
  for (const l of msg.links) {
    const e = linkEdge.get(l.i);
    if (!e) continue;
    const was = load.get(e);
    if (!was || l.u > was.u) load.set(e, l);
  }
  if (cy)
    cy.batch(() => {
      for (const [e, l] of load) cy.$id(e).data('load', Math.min(l.u, 1));
    });
  const top = [...load.entries()].sort((a, b) => b[1].u - a[1].u).slice(0, 6);
  $('busiest').replaceChildren(...top.map(([e, l]) => {
    const li = document.createElement('li');
    li.textContent = `${e}: ${(100 * l.u).toFixed(1)} % ` +
                     `(${l.gbps.toPrecision(3)} Gbit/s)`;
    return li;
  }));
  if (cy) {
    const down = new Set((msg.down || []).map((f) => 'f' + f));
    cy.edges('.fibre').forEach((e) => {
      if (down.has(e.id())) e.addClass('cut'); else e.removeClass('cut');
    });
  }
  $('clock').textContent = msg.scn_t === undefined ? '' :
      `scenario time ${msg.scn_t.toFixed(3)} s · `;
  onTasks(msg.tasks);
  onTimeline(msg);
  updates++;
  $('updates').textContent = String(updates);
}

// The last round of each task: measured against the twin, its phases as
// a bar (broadcast, compute, upload, each its share of the round).
let tasksShown = '';
function onTasks(tasks) {
  const key = JSON.stringify(tasks || []);
  if (key === tasksShown) return;
  tasksShown = key;
  $('tasks').hidden = !(tasks && tasks.length);
  $('tasks').tBodies[0].replaceChildren(...(tasks || []).map((t) => {
    const tr = document.createElement('tr');
    const cell = (text) => {
      const td = document.createElement('td');
      td.textContent = text;
      tr.append(td);
      return td;
    };
    cell(t.name);
    // a task not done in its round failed, or ended in it without
    // failing: it moved to new trees or left
    cell(t.done ? t.ms.toFixed(2) : t.failed ? 'failed' : 'ended');
    cell(t.pred_ms.toFixed(2));
    const bar = document.createElement('span');
    bar.className = 'bar';
    if (t.done)
      for (const [k, cls] of [['bcast_ms', 'b'], ['compute_ms', 'c'],
                              ['upload_ms', 'u']]) {
        const s = document.createElement('span');
        s.className = 'ph ' + cls;
        s.style.width = (100 * Math.max(t[k], 0) / (t.ms || 1)) + '%';
        s.title = `${k.split('_')[0]} ${t[k].toFixed(2)} ms`;
        bar.append(s);
      }
    cell('').append(bar);
    return tr;
  }));
}

// The scenario's events in time, greyed once their time has come (the
// run's clock, scn_t), and the fibres the page cut or repaired.
let timelineShown = '';
function onTimeline(msg) {
  const items = (topo.events || []).map((e) => ({
    t: e.at_s, text: `${e.kind} ${e.what}`,
    cls: msg.scn_t !== undefined && msg.scn_t >= e.at_s ? 'due' : '' }));
  for (const l of msg.log || [])
    items.push({ t: l.t, text: l.what, cls: 'page' });
  items.sort((a, b) => a.t - b.t);
  const key = JSON.stringify(items);
  if (key === timelineShown) return;
  timelineShown = key;
  $('timeline').replaceChildren(...items.map((it) => {
    const li = document.createElement('li');
    li.textContent = `${Number(it.t).toFixed(3)} s: ${it.text}`;
    li.className = it.cls;
    return li;
  }));
}

// The network shown (again, when the events say it changed: a sweep's
// next point); topoSeq is the number of the one drawn.
let topoSeq = -1, loading = false;

async function loadTopology(seq) {
  loading = true;
  try {
    const r = await fetch('topology' + q);
    if (!r.ok) { problem('the view refused: ' + r.status); return; }
    const t = await r.json();
    const picked = pickedTask;
    topoSeq = seq;
    if (cy) { cy.destroy(); cy = null; }
    $('task').replaceChildren(new Option('(none)', ''));
    $('send').disabled = true;
    if (t.waiting) {
      topo = null;
      $('scenario').textContent = '(waiting for an emulation)';
      $('facts').textContent = '';
      return;
    }
    topo = t;
    servers.clear();
    linkEdge = new Map();
    $('scenario').textContent = topo.scenario + ' · ' + topo.scheduler;
    $('facts').textContent = `prefix ${topo.prefix} · dilation ` +
        `${topo.dilation} · ${topo.tasks.length} tasks · ` +
        `${topo.lightpaths.length} lightpaths`;
    for (const name of new Set(topo.tasks.map((t2) => t2.name)))
      $('task').append(new Option(name, name));
    for (const n of topo.graph.nodes)
      if (n.kind === 'server') servers.add(n.name);
    for (const l of topo.graph.links) linkEdge.set(l.i, edgeOfLink(l.name));
    if (typeof cytoscape === 'function') draw(topo);
    else problem('cytoscape.js is not installed: the set-up installs it ' +
                 '(npm install in tools/view); the load is listed only');
    // the same run's trees again (an epoch came in): the task stays picked
    if (picked && topo.tasks.some((t2) => t2.name === picked)) {
      $('task').value = picked;
      showTask(picked);
    }
  } finally {
    loading = false;
  }
}

async function start() {
  $('task').addEventListener('change', (ev) => showTask(ev.target.value));
  $('traffic').addEventListener('submit', sendTraffic);
  const es = new EventSource('events' + q);
  es.addEventListener('open', () => { $('state').textContent = 'live'; });
  es.addEventListener('error', () => {
    $('state').textContent = 'disconnected';
  });
  es.addEventListener('load', (ev) => {
    const msg = JSON.parse(ev.data);
    $('note').textContent = msg.note || '';
    if (msg.topology !== topoSeq) {
      if (!loading) loadTopology(msg.topology);
      return;
    }
    if (topo) onLoad(msg);
  });
}

// what a test (tests/browser/view.mjs) reads of the page
window.twinlabView = {
  get cy() { return cy; },
  get updates() { return updates; },
  get topology() { return topo; },
  get said() { return said; },
  get timeline() {
    return [...$('timeline').children].map((li) => li.textContent);
  },
  get tasks() { return JSON.parse(tasksShown || '[]'); },
};

start().catch((e) => problem(String(e)));
